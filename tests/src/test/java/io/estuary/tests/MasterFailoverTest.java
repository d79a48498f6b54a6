package io.estuary.tests;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.server.admin.AdminJson;
import io.estuary.server.admin.AdminViews;
import io.estuary.testing.process.MasterProcesses;
import io.estuary.worker.MiniCluster;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import scala.Tuple2;

/**
 * Spark jobs through three Raft masters while masters fail: the data path never needs a master, and registrations
 * place shuffles by the application's slot lease, recorded with a master once there is a leader. Every output is compared with the same job on native sort shuffle.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MasterFailoverTest {
    private Checksum expectedChained;
    private Checksum expectedSingle;
    private Checksum expectedPaused;
    private MiniCluster cluster;
    private SparkSession spark;

    /** {@code rounds} shuffles in a row; map tasks linger so that masters can fail while the job runs. */
    static Checksum chained(SparkSession s, int rounds, long lingerMs) {
        JavaPairRDD<Integer, Long> rdd = ShuffleJobs.pairs(s, 60_000, 4_000, 4);
        for (int r = 0; r < rounds; r++) {
            int keys = 4_000 - r * 500;
            rdd = rdd.mapPartitionsToPair(
                            it -> {
                                Thread.sleep(lingerMs);
                                return it;
                            },
                            true)
                    .reduceByKey(Long::sum, 5)
                    .mapToPair(kv -> new Tuple2<>(kv._1() % keys, kv._2()));
        }
        return Checksum.of(rdd.reduceByKey(Long::sum, 3).map(Tuple2::toString));
    }

    /**
     * One shuffle without map-side combine, so maps push as they go: each map pushes half its records, pauses for
     * {@code pauseMs} (when masters and workers can fail), then pushes the rest.
     */
    static Checksum pausedHalfway(SparkSession s, long pauseMs) {
        JavaPairRDD<Integer, Long> rdd = ShuffleJobs.pairs(s, 400_000, 4_000, 4)
                .mapPartitionsToPair(
                        it -> {
                            java.util.List<Tuple2<Integer, Long>> all = new java.util.ArrayList<>();
                            it.forEachRemaining(all::add);
                            return new java.util.Iterator<Tuple2<Integer, Long>>() {
                                private int i;

                                @Override
                                public boolean hasNext() {
                                    if (i == all.size() / 2 && pauseMs > 0) {
                                        try {
                                            Thread.sleep(pauseMs);
                                        } catch (InterruptedException e) {
                                            Thread.currentThread().interrupt();
                                        }
                                    }
                                    return i < all.size();
                                }

                                @Override
                                public Tuple2<Integer, Long> next() {
                                    return all.get(i++);
                                }
                            };
                        },
                        true)
                .partitionBy(new org.apache.spark.HashPartitioner(5));
        return Checksum.of(rdd.map(Tuple2::toString));
    }

    @BeforeAll
    void nativeResults() {
        SparkSession nat = SparkSessions.start(SparkSessions.base("local[2]", "native"));
        try {
            expectedChained = chained(nat, 4, 0);
            expectedSingle = chained(nat, 1, 0);
            expectedPaused = pausedHalfway(nat, 0);
        } finally {
            nat.stop();
        }
    }

    @BeforeEach
    void start() throws Exception {
        cluster = new MiniCluster(
                3, 2, 1, new EstuaryConf().set(io.estuary.common.config.MasterConfig.SLOT_LEASE_DURATION, "10min"));
        spark = SparkSessions.start(
                SparkSessions.estuary(SparkSessions.base("local[2]", "failover"), cluster.masterEndpoint())
                        .set("spark.estuary.client.master.wait", "60s"));
    }

    @AfterEach
    void stop() throws Exception {
        if (spark != null) spark.stop();
        SparkSession.clearActiveSession();
        SparkSession.clearDefaultSession();
        if (cluster != null) cluster.close();
    }

    @AfterAll
    void done() {}

    private int registeredShuffles() {
        // The Estuary application is Spark's id plus the lifecycle manager's own suffix.
        String app = spark.sparkContext().applicationId() + "-";
        return cluster.master()
                .state(st -> st.applicationIds().stream()
                        .filter(id -> id.startsWith(app))
                        .mapToInt(id -> st.shuffles(id).size())
                        .sum());
    }

    @Test
    void leaderLossDuringAJobFailsNothing() throws Exception {
        CompletableFuture<Checksum> job = CompletableFuture.supplyAsync(() -> chained(spark, 4, 400));
        waitFor(() -> registeredShuffles() >= 1, 120_000, "the job registers its first shuffle");
        int atKill = registeredShuffles();
        int leader = cluster.awaitLeader();
        long t0 = System.nanoTime();
        cluster.stopMaster(leader);
        System.out.printf(
                "FAILOVER (in-process stop, 300 ms election timeout): answered again after %d ms%n",
                probeUntilAnswered(cluster.masterEndpoint()) - t0 / 1_000_000);
        Checksum got = job.get(5, TimeUnit.MINUTES);
        assertEquals(expectedChained, got);
        assertNotEquals(leader, cluster.awaitLeader());
        assertTrue(registeredShuffles() > atKill, "later shuffles must have registered with the new leader");
    }

    @Test
    void rollingRestartOfEveryMasterDuringAJob() throws Exception {
        CompletableFuture<Checksum> job = CompletableFuture.supplyAsync(() -> chained(spark, 4, 400));
        waitFor(() -> registeredShuffles() >= 1, 120_000, "the job registers its first shuffle");
        for (int i = 0; i < 3; i++) {
            cluster.stopMaster(i);
            cluster.awaitLeader();
            cluster.restartMaster(i);
            int idx = i;
            byte[][] states = new byte[1][];
            waitFor(
                    () -> {
                        states[0] =
                                cluster.master().log().stateMachine().snapshot().toByteArray();
                        return java.util.Arrays.equals(
                                states[0],
                                cluster.master(idx)
                                        .log()
                                        .stateMachine()
                                        .snapshot()
                                        .toByteArray());
                    },
                    120_000,
                    "master " + i + " catches up");
        }
        assertEquals(expectedChained, job.get(5, TimeUnit.MINUTES));
    }

    @Test
    void twoMastersDownWhileAShuffleFinishesThenANewJobWaitsForOne() throws Exception {
        CompletableFuture<Checksum> job = CompletableFuture.supplyAsync(() -> chained(spark, 1, 1500));
        waitFor(() -> registeredShuffles() >= 2, 120_000, "the job registers its shuffles");
        int leader = cluster.awaitLeader();
        int other = (leader + 1) % 3;
        cluster.stopMaster(leader);
        cluster.stopMaster(other);
        // The shuffles hold their slots: pushing, committing and fetching go on without any master.
        assertEquals(expectedSingle, job.get(5, TimeUnit.MINUTES));

        // A new job registers new shuffles: the application places them by its slot lease (a master's placement it
        // holds for estuary.master.slot.leaseDuration, 10 minutes here) and reserves them on the workers, without a
        // master. Without a lease a registration waits for a quorum (ShuffleRegistrarTest).
        assertEquals(expectedSingle, chained(spark, 1, 0));
        // Their placements are recorded once a quorum is back (retried meanwhile), so the masters know every shuffle
        // the workers hold: two of the first job and two of this one, placed or since unregistered.
        cluster.restartMaster(leader);
        waitFor(() -> knownShuffles() >= 4, 120_000, "the placements made without a master are recorded");
    }

    /** The shuffles of this job's application the masters know, placed or unregistered. */
    private int knownShuffles() {
        String app = spark.sparkContext().applicationId() + "-";
        return cluster.master().state(st -> {
            int n = 0;
            for (String id : st.applicationIds()) {
                if (!id.startsWith(app)) continue;
                for (int shuffle = 0; shuffle < 100; shuffle++) {
                    if (st.isShufflePlaced(id, shuffle) || st.isShuffleUnregistered(id, shuffle)) n++;
                }
            }
            return n;
        });
    }

    /**
     * Two of three masters down, then a worker dies while the maps push: a running shuffle still gets new locations
     * (the driver places the revived partitions on the shuffle's surviving workers itself when no master answers),
     * and the output is exact. See "Without a master quorum" in the README.
     */
    @Test
    void aWorkerLossWithTwoMastersDownIsRevivedWithoutAMaster() throws Exception {
        CompletableFuture<Checksum> job = CompletableFuture.supplyAsync(() -> pausedHalfway(spark, 10_000));
        // Reserved on the workers and pushed to, not only registered at the master: with authentication on (the
        // default), a driver's first connection to a worker is checked with the application's secret, which the worker
        // asks a master for until a reservation brought it (docs/security.md).
        waitFor(
                () -> registeredShuffles() >= 1
                        && (cluster.dataFileCount() > 0
                                || cluster.workers().stream().anyMatch(w -> w.bufferedBytes() > 0)),
                120_000,
                "the maps have registered their shuffle and pushed");
        int leader = cluster.awaitLeader();
        cluster.stopMaster(leader);
        cluster.stopMaster((leader + 1) % 3);
        cluster.workers().get(0).close(); // as a crash: its open locations are never committed
        assertEquals(expectedPaused, job.get(5, TimeUnit.MINUTES), "output after a worker loss without a quorum");
    }

    /** Masters as separate processes: the leader is killed with SIGKILL while the job runs. */
    @Test
    void killMinus9OfTheLeaderProcessDuringAJob() throws Exception {
        spark.stop();
        cluster.close();
        spark = null;
        cluster = null;
        try (MasterProcesses masters = new MasterProcesses(3)) {
            masters.awaitLeader();
            cluster = MiniCluster.withExternalMasters(masters.endpoints(), 2, new EstuaryConf());
            spark = SparkSessions.start(
                    SparkSessions.estuary(SparkSessions.base("local[2]", "kill-9"), masters.endpoints())
                            .set("spark.estuary.client.master.wait", "60s"));
            CompletableFuture<Checksum> job = CompletableFuture.supplyAsync(() -> chained(spark, 4, 400));
            int leader = masters.awaitLeader();
            String app = spark.sparkContext().applicationId() + "-"; // plus the lifecycle manager's suffix
            waitFor(
                    () -> {
                        AdminViews.MasterStatus st = status(masters, leader);
                        return st != null
                                && st.applications().stream()
                                        .anyMatch(
                                                a -> a.id().matches(java.util.regex.Pattern.quote(app) + "[0-9a-f]{8}")
                                                        && !a.shuffles().isEmpty());
                    },
                    120_000,
                    "the job registers its first shuffle");
            long t0 = System.nanoTime();
            masters.kill(leader);
            System.out.printf(
                    "FAILOVER (kill -9, default election timeout): answered again after %d ms%n",
                    probeUntilAnswered(masters.endpoints()) - t0 / 1_000_000);
            assertEquals(expectedChained, job.get(5, TimeUnit.MINUTES), "output after kill -9 of the leader");
            int next = masters.awaitLeader();
            assertNotEquals(leader, next);
            AdminViews.MasterStatus st = status(masters, next);
            assertTrue(
                    st != null && st.applications().stream().anyMatch(a -> a.id().startsWith(app)), String.valueOf(st));
        }
    }

    /** GET /api/status of master i as its typed view, or null while it does not answer. */
    private static AdminViews.MasterStatus status(MasterProcesses masters, int i) {
        String json = masters.get(i, "/api/status");
        try {
            return json == null ? null : AdminJson.read(json, AdminViews.MasterStatus.class);
        } catch (IllegalArgumentException e) {
            return null; // a master answering mid-start or mid-stop
        }
    }

    /**
     * How long a client of the masters (a driver, a worker) is without an answer after a leader loss: returns the
     * time (ms, nanoTime-based) when a heartbeat is answered again. Printed by the tests, never asserted.
     */
    static long probeUntilAnswered(String endpoints) throws Exception {
        // It proves the cluster secret of the harness's servers, as a worker does (authentication is on by default).
        try (io.estuary.network.client.TransportClientFactory f = new io.estuary.network.client.TransportClientFactory(
                new EstuaryConf(),
                "probe",
                io.estuary.network.auth.Credentials.cluster(
                        io.estuary.testing.ClusterSecrets.read(io.estuary.testing.ClusterSecrets.shared())))) {
            new io.estuary.network.rpc.MasterClient(f, java.util.Arrays.asList(endpoints.split(",")))
                    .ask(
                            io.estuary.common.protocol.Request.newBuilder()
                                    .setApplicationHeartbeat(
                                            io.estuary.common.protocol.ApplicationHeartbeatRequest.newBuilder()
                                                    .setAppId("probe")),
                            io.estuary.common.protocol.Empty.parser(),
                            60_000);
        } catch (io.estuary.network.client.RemoteException e) {
            // A leader answered, refusing an application that never registered its secret: answered all the same.
            if (e.status() != io.estuary.common.status.StatusCode.UNAUTHENTICATED) throw e;
        }
        return System.nanoTime() / 1_000_000;
    }
}
