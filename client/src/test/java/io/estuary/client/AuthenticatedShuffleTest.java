package io.estuary.client;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.ConfigException;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.testing.ClusterSecrets;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Collections;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Shuffles with authentication on, through real masters and workers on loopback (with replicas, so workers prove
 * themselves to each other): each application registers its own secret, its executors prove it to the driver and the
 * workers, workers learn it from the master; a wrong secret is refused while a good job's output stays exact; with
 * three masters the secrets survive the leader's death and a master's restart.
 */
class AuthenticatedShuffleTest {
    private Path dir;
    private Path secretFile;

    @BeforeEach
    void setUp() throws Exception {
        dir = Files.createTempDirectory("estuary-auth");
        secretFile = ClusterSecrets.newFile(dir);
    }

    @AfterEach
    void tearDown() throws Exception {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Collections.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private EstuaryConf overrides() {
        return ClusterSecrets.enable(new EstuaryConf(), secretFile).set(WorkerConfig.HEARTBEAT_INTERVAL.key(), "300ms");
    }

    private static EstuaryConf clientConf(MiniCluster cluster) {
        return cluster.clientConf()
                .set(ClientConfig.PUSH_REPLICATE.key(), "true")
                .set(ClientConfig.PUSH_BUFFER_SIZE.key(), "4k");
    }

    /** An executor's configuration: the driver's, plus the application secret the engine hands over. */
    private static EstuaryConf executorConf(EstuaryConf driverConf, byte[] secret) {
        return driverConf
                .copy()
                .set(AuthConfig.APPLICATION_SECRET.key(), Base64.getEncoder().encodeToString(secret));
    }

    /** Writes {@code maps} maps over {@code partitions} partitions and reads it all back; {count, checksum}. */
    private static long[][] job(ShuffleClient client, ShuffleSpec spec, int records) throws Exception {
        long count = 0;
        long sum = 0;
        for (int m = 0; m < spec.numMappers; m++) {
            MapOutputWriter w = client.openWriter(spec, m, 0);
            for (int i = 0; i < records; i++) {
                byte[] rec = FramedRecords.framed(spec.shuffleId * 31 + m, i, 10 + (i * 13) % 200);
                w.write(Math.floorMod(i * 7 + m, spec.numPartitions), rec, 0, rec.length);
                count++;
                sum += FramedRecords.hash(rec);
            }
            w.finish();
        }
        long[] got = FramedRecords.readAll(client, spec, 0, spec.numPartitions);
        return new long[][] {{count, sum}, got};
    }

    private static void assertExact(long[][] expectedAndGot) {
        assertEquals(expectedAndGot[0][0], expectedAndGot[1][0], "records read back");
        assertEquals(expectedAndGot[0][1], expectedAndGot[1][1], "checksum of the records read back");
    }

    private static ShuffleSpec spec(LifecycleManager lm, int shuffle) {
        return new ShuffleSpec(lm.appId(), shuffle, 3, 5, "127.0.0.1", lm.port());
    }

    private static byte[] randomSecret() {
        byte[] s = new byte[32];
        new SecureRandom().nextBytes(s);
        return s;
    }

    @Test
    void aJobWithAuthenticationIsExactAndAWrongSecretIsRefusedMeanwhile() throws Exception {
        try (MiniCluster cluster = new MiniCluster(1, 2, 1, overrides())) {
            EstuaryConf driverConf = clientConf(cluster);
            LifecycleManager lm = new LifecycleManager("app-auth", driverConf, "127.0.0.1");
            boolean closed = false;
            try (ShuffleClient good = new ShuffleClient(executorConf(driverConf, lm.applicationSecret()));
                    ShuffleClient forger = new ShuffleClient(executorConf(driverConf, randomSecret()))) {
                // The good job runs while a client with a wrong secret for the same application tries every port.
                CompletableFuture<long[][]> run = CompletableFuture.supplyAsync(() -> {
                    try {
                        return job(good, spec(lm, 0), 3000);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                ShuffleSpec target = spec(lm, 0);
                WorkerAddress w = cluster.workers().get(0).address();
                RemoteException driver = assertThrows(
                        RemoteException.class,
                        () -> forger.mapperEnd(target, null, 0, false, 0, 99, Collections.emptyList()));
                assertEquals(StatusCode.UNAUTHENTICATED, driver.status(), driver.getMessage());
                RemoteException push = assertThrows(RemoteException.class, () -> forger.pushClient(lm.appId(), w));
                assertEquals(StatusCode.UNAUTHENTICATED, push.status(), push.getMessage());
                RemoteException fetch = assertThrows(RemoteException.class, () -> forger.fetchClient(lm.appId(), w));
                assertEquals(StatusCode.UNAUTHENTICATED, fetch.status(), fetch.getMessage());
                assertExact(run.get(120, TimeUnit.SECONDS));

                // Workers learnt the secret from the master (a push port and a replica each).
                for (Worker worker : cluster.workers())
                    assertTrue(worker.secrets().contains(lm.appId()));
                String app = lm.appId();
                closed = true;
                lm.close();
                // The application ended: the master tells the workers, which forget its secret.
                for (Worker worker : cluster.workers()) {
                    waitFor(() -> !worker.secrets().contains(app), 60_000, "the worker forgets the ended application");
                }
            } finally {
                if (!closed) lm.close();
            }
        }
    }

    @Test
    void aReservationBringsTheSecretSoPushesAuthenticateWhileNoMasterRuns() throws Exception {
        try (MiniCluster cluster = new MiniCluster(1, 2, 1, overrides())) {
            EstuaryConf driverConf = clientConf(cluster);
            LifecycleManager lm = new LifecycleManager("app-reserved", driverConf, "127.0.0.1");
            String app = lm.appId();
            try {
                // A first shuffle opens the driver's connections to the workers (their handshakes ask the master).
                try (ShuffleClient first = new ShuffleClient(executorConf(driverConf, lm.applicationSecret()))) {
                    assertExact(job(first, spec(lm, 0), 500));
                }
                // Each worker forgets the secret (as a bounded cache evicts it): only a reservation can bring it back.
                long[] questions = new long[cluster.workers().size()];
                for (int i = 0; i < questions.length; i++) {
                    Worker w = cluster.workers().get(i);
                    w.secrets().forget(app);
                    assertFalse(w.secrets().contains(app));
                    questions[i] = w.secrets().masterQuestions();
                }
                // A new executor: new connections to every port, each handshake needs the secret.
                try (ShuffleClient executor = new ShuffleClient(executorConf(driverConf, lm.applicationSecret()))) {
                    ShuffleSpec spec = spec(lm, 1);
                    executor.register(spec, 0, false); // the master places the slots, the driver reserves them
                    for (Worker w : cluster.workers()) {
                        assertTrue(w.secrets().contains(app), "the reservation (replicas on both) brought the secret");
                    }
                    cluster.stopMaster(0); // every master: a miss now could not be answered
                    long count = 0;
                    long sum = 0;
                    for (int m = 0; m < spec.numMappers; m++) {
                        MapOutputWriter w = executor.openWriter(spec, m, 0);
                        for (int i = 0; i < 2000; i++) {
                            byte[] rec = FramedRecords.framed(spec.shuffleId * 31 + m, i, 10 + (i * 13) % 200);
                            w.write(Math.floorMod(i * 7 + m, spec.numPartitions), rec, 0, rec.length);
                            count++;
                            sum += FramedRecords.hash(rec);
                        }
                        w.finish();
                    }
                    long[] got = FramedRecords.readAll(executor, spec, 0, spec.numPartitions);
                    assertExact(new long[][] {{count, sum}, got});
                }
                for (int i = 0; i < questions.length; i++) {
                    assertEquals(
                            questions[i],
                            cluster.workers().get(i).secrets().masterQuestions(),
                            "worker " + i + " asked no master for the secret: it came with the reservation");
                }
            } finally {
                lm.close();
            }
        }
    }

    @Test
    void clientsWithoutASecretOrCredentialsAreRefused() throws Exception {
        try (MiniCluster cluster = new MiniCluster(1, 1, 1, overrides())) {
            EstuaryConf driverConf = clientConf(cluster);
            ConfigException none = assertThrows(ConfigException.class, () -> new ShuffleClient(driverConf));
            assertTrue(none.getMessage().contains(AuthConfig.APPLICATION_SECRET.key()), none.getMessage());
            // A client of a build with authentication off proves nothing: the worker's ports admit no anonymous peer.
            WorkerAddress w = cluster.workers().get(0).address();
            try (TransportClientFactory anonymous = new TransportClientFactory(new EstuaryConf(), "anonymous")) {
                RemoteException e =
                        assertThrows(RemoteException.class, () -> anonymous.client(w.getHost(), w.getPushPort()));
                assertEquals(StatusCode.UNAUTHENTICATED, e.status(), e.getMessage());
            }
        }
    }

    @Test
    void threeMastersKeepTheSecretsThroughTheLeadersDeathAndARestart() throws Exception {
        try (MiniCluster cluster = new MiniCluster(3, 2, 1, overrides())) {
            EstuaryConf driverConf = clientConf(cluster);
            LifecycleManager a = new LifecycleManager("app-a", driverConf, "127.0.0.1");
            LifecycleManager b = new LifecycleManager("app-b", driverConf, "127.0.0.1");
            try (ShuffleClient ca = new ShuffleClient(executorConf(driverConf, a.applicationSecret()));
                    ShuffleClient cb = new ShuffleClient(executorConf(driverConf, b.applicationSecret()))) {
                assertExact(job(ca, spec(a, 0), 1000));
                int leader = cluster.awaitLeader();
                cluster.stopMaster(leader);
                cluster.awaitLeader();
                // New shuffles after the leader died: placed by the new leader, reserved on workers that learn (or
                // already know) the secrets, and app-b's workers never saw it before.
                for (Worker w : cluster.workers()) w.secrets().forget(b.appId());
                assertExact(job(ca, spec(a, 1), 1000));
                assertExact(job(cb, spec(b, 0), 1000));
                cluster.restartMaster(leader);
                waitFor(
                        () -> cluster.master(leader).state(s -> s.sealedSecret(b.appId())) != null,
                        60_000,
                        "the restarted master reads the secrets back");
                assertNotNull(cluster.master(leader).state(s -> s.sealedSecret(a.appId())));
            } finally {
                a.close();
                b.close();
            }
        }
    }
}
