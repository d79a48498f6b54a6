package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.testing.ClusterTls;
import io.estuary.testing.process.ProcessCluster;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Every job of {@link ShuffleJobs} on native sort shuffle, then on Estuary (a real master and two real workers on
 * loopback, each in its own JVM), in the same Spark: the outputs must match row for row (count and checksum). The
 * servers run apart so that the Spark lines of tests-spark run this with only their shaded client jar on the class
 * path, as users deploy it. Last, one job again against servers with TLS on
 * ({@link #overTlsWithAuthenticationAndReplicas}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SparkShuffleTest {
    /** Jobs whose readers stop before their records run out (a limit). */
    private static final java.util.Set<String> READERS_STOP_EARLY =
            java.util.Collections.singleton("sqlGlobalLimitWithoutLocalLimit");
    /** A map task's bound on buffered bytes, small enough that many jobs here push early. */
    private static final String MAX_BUFFERED = "2m";
    /**
     * Jobs a module leaves out (comma-separated names of {@link ShuffleJobs#all}): the extra Spark lines skip what
     * tests the client rather than Spark (20,000 partitions takes a minute) to keep CI short.
     */
    private static final String SKIP_JOBS_PROPERTY = "estuary.test.skipJobs";

    /**
     * True in the modules whose Spark line shares its writer with another module's (Spark 3.3, 3.4 and 3.5 on Scala
     * 2.13 with 3.5's, 4.1 with 4.0's): the TLS job starts a cluster of its own (half a minute to a minute), and the
     * TLS code of their shaded jars is the same as that of the line that runs it.
     */
    private static final String SKIP_TLS_PROPERTY = "estuary.test.skipTls";

    private final Map<String, Checksum> nativeResults = new HashMap<>();
    private final Map<String, ShuffleMetricsListener.Totals> nativeMetrics = new HashMap<>();
    private ShuffleMetricsListener metrics;
    private ProcessCluster cluster;
    private SparkSession spark;

    /** The jobs of {@link ShuffleJobs#all} this module runs. */
    private static Map<String, Function<SparkSession, Checksum>> jobs() {
        Map<String, Function<SparkSession, Checksum>> jobs = ShuffleJobs.all();
        for (String skip : System.getProperty(SKIP_JOBS_PROPERTY, "").split(",")) {
            if (skip.trim().isEmpty()) continue;
            if (jobs.remove(skip.trim()) == null)
                throw new IllegalArgumentException(SKIP_JOBS_PROPERTY + ": no job " + skip);
        }
        return jobs;
    }

    @BeforeAll
    void runNativeThenStartEstuary() throws Exception {
        // local[2,4]: two cores, and a failed task is retried (up to 4 attempts).
        // Both with Estuary's SQL extensions, so that plans (and the rows they move) are the same.
        SparkSession nativeSpark =
                SparkSessions.start(SparkSessions.withSqlExtensions(SparkSessions.base("local[2,4]", "native")));
        try {
            ShuffleMetricsListener nativeListener = ShuffleMetricsListener.on(nativeSpark);
            for (Map.Entry<String, Function<SparkSession, Checksum>> job : jobs().entrySet()) {
                nativeListener.reset();
                nativeResults.put(job.getKey(), job.getValue().apply(nativeSpark));
                nativeMetrics.put(job.getKey(), nativeListener.totals(nativeSpark));
            }
        } finally {
            nativeSpark.stop();
        }
        cluster = new ProcessCluster(2, 2); // two disks per worker
        spark = SparkSessions.start(SparkSessions.withSqlExtensions(
                SparkSessions.estuary(SparkSessions.base("local[2,4]", "estuary"), cluster.masterEndpoint())
                        .set("spark.estuary.client.push.maxBufferedBytes", MAX_BUFFERED)));
        metrics = ShuffleMetricsListener.on(spark);
    }

    @AfterAll
    void stop() throws Exception {
        if (spark != null) spark.stop();
        if (cluster != null) cluster.close();
    }

    @TestFactory
    @Order(1)
    List<DynamicTest> estuaryMatchesNativeShuffle() {
        List<DynamicTest> tests = new ArrayList<>();
        for (Map.Entry<String, Function<SparkSession, Checksum>> job : jobs().entrySet()) {
            tests.add(DynamicTest.dynamicTest(job.getKey(), () -> {
                Checksum expected = nativeResults.get(job.getKey());
                metrics.reset();
                Checksum actual = job.getValue().apply(spark);
                assertEquals(expected, actual, job.getKey() + ": Estuary's output differs from native shuffle's");
                ShuffleMetricsListener.Totals seen = metrics.totals(spark);
                assertSparkSeesTheShuffle(job.getKey(), nativeMetrics.get(job.getKey()), seen);
                if (job.getKey().equals(ShuffleJobs.TWENTY_THOUSAND_PARTITIONS)) {
                    // The writer reports what its buffers held at most as the task's peak execution memory.
                    assertTrue(
                            seen.maxTaskPeakMemory > 0 && seen.maxTaskPeakMemory <= (2L << 20) + 64 * 1024,
                            "a map task's buffers held " + seen.maxTaskPeakMemory + " bytes with 20,000 partitions");
                }
            }));
        }
        tests.add(DynamicTest.dynamicTest(
                "dataWasWrittenToWorkers",
                () -> assertTrue(
                        cluster.workers().dataFileCount() > 0,
                        "no partition files on the workers: did Estuary shuffle at all?")));
        return tests;
    }

    /** The job {@link #overTlsWithAuthenticationAndReplicas} runs again: two shuffles (both sides of a join). */
    private static final String TLS_JOB = "join";

    /**
     * {@link #TLS_JOB} against a master and two workers (their own JVMs) with TLS on the cluster-internal and data
     * ports, authentication on (the harness's default) and replicas on, the driver's own port on TLS too: the output
     * matches native shuffle's. The servers' ports accept only TLS (a plain client is refused at connect), so the job's
     * success proves every push, replica, fetch and RPC went over TLS; each port is also checked to present the
     * cluster's certificate. Runs last: it stops the shared session (one SparkContext per JVM).
     */
    @Test
    @Order(2)
    void overTlsWithAuthenticationAndReplicas() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(
                Boolean.getBoolean(SKIP_TLS_PROPERTY), SKIP_TLS_PROPERTY + ": run by the lines of their own writer");
        if (spark != null) spark.stop();
        spark = null;
        ClusterTls tls = ClusterTls.create(java.nio.file.Files.createTempDirectory("estuary-spark-tls"));
        try (ProcessCluster secured =
                ProcessCluster.withSettings(2, tls.serverSettings().toArray(new String[0]))) {
            SparkConf conf = SparkSessions.estuary(
                            SparkSessions.base("local[2,4]", "estuary-tls"), secured.masterEndpoint())
                    .set("spark.estuary.client.push.replicate", "true")
                    .set("spark.estuary.client.push.maxBufferedBytes", MAX_BUFFERED);
            for (Map.Entry<String, String> kv : tls.jobSettings("spark.").entrySet())
                conf.set(kv.getKey(), kv.getValue());
            SparkSession s = SparkSessions.start(SparkSessions.withSqlExtensions(conf));
            try {
                assertEquals(
                        nativeResults.get(TLS_JOB),
                        jobs().get(TLS_JOB).apply(s),
                        TLS_JOB + " over TLS: Estuary's output differs from native shuffle's");
                assertTrue(secured.workers().dataFileCount() > 0, "no partition files on the TLS cluster's workers");
            } finally {
                s.stop();
            }
            String master = secured.masterEndpoint();
            assertPresentsTheClusterCertificate(
                    tls, "the master", Integer.parseInt(master.substring(master.lastIndexOf(':') + 1)));
            for (int i = 0; i < secured.workers().size(); i++) {
                assertPresentsTheClusterCertificate(
                        tls,
                        "worker " + i + "'s control port",
                        secured.workers().rpcPort(i));
                assertPresentsTheClusterCertificate(
                        tls, "worker " + i + "'s push port", secured.workers().pushPort(i));
                assertPresentsTheClusterCertificate(
                        tls, "worker " + i + "'s fetch port", secured.workers().fetchPort(i));
            }
        }
    }

    private static void assertPresentsTheClusterCertificate(ClusterTls tls, String what, int port) throws Exception {
        assertEquals(
                ClusterTls.SUBJECT,
                tls.peerCertificate(port).getSubjectX500Principal().getName(),
                what + " presents another certificate");
    }

    /**
     * Spark's own task metrics (listener, UI) show Estuary's shuffle as they show native shuffle's: the same records
     * written and read, and bytes and write time wherever records moved.
     */
    private static void assertSparkSeesTheShuffle(
            String job, ShuffleMetricsListener.Totals expected, ShuffleMetricsListener.Totals actual) {
        System.out.println(job + " metrics: native " + expected + "; Estuary " + actual);
        assertEquals(expected.recordsWritten, actual.recordsWritten, job + ": shuffle records written");
        if (READERS_STOP_EARLY.contains(job)) {
            // Spark's own reader merges its read metrics only once its records run out, so a limit that stops reading
            // early shows nothing read with native shuffle; Estuary's reader also merges at task end.
            assertTrue(
                    actual.recordsRead >= expected.recordsRead && actual.recordsRead <= actual.recordsWritten,
                    job + ": shuffle records read " + actual.recordsRead);
        } else {
            assertEquals(expected.recordsRead, actual.recordsRead, job + ": shuffle records read");
        }
        if (actual.recordsWritten > 0) {
            assertTrue(actual.bytesWritten > 0, job + ": no shuffle bytes written reported: " + actual);
            assertTrue(actual.writeTimeNanos > 0, job + ": no shuffle write time reported: " + actual);
        }
        if (actual.recordsRead > 0) {
            assertTrue(
                    actual.bytesRead > 0 && actual.remoteBytesRead == actual.bytesRead,
                    job + ": shuffle bytes read should all be remote: " + actual);
        }
    }
}
