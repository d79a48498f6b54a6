package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.testing.process.ProcessCluster;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;

/**
 * Every job of {@link ShuffleJobs} on native sort shuffle, then on Estuary (a real master and two real workers on
 * loopback, each in its own JVM), in the same Spark: the outputs must match row for row (count and checksum). The
 * servers run apart so that the Spark lines of tests-spark run this with only their shaded client jar on the class
 * path, as users deploy it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
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
