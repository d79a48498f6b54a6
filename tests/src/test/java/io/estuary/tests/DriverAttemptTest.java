package io.estuary.tests;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.util.ShuffleKey;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * A driver retried under the same application id (issue 14, item 2), as YARN retries a cluster-mode driver: the
 * first attempt runs in its own JVM until its first shuffle's maps have ended, and is killed (SIGKILL: it never
 * unregisters); the second, with the same Spark application id and attempt 2, runs the same job. Its output equals
 * native shuffle's without a stage rerun, and the dead attempt's Estuary application expires and its data is
 * deleted while the second still runs, as any dead application's.
 */
class DriverAttemptTest {
    static final String APP = "application_1700000000000_0007";

    @Test
    void aRetriedDriverIsItsOwnApplicationAndTheDeadOneExpires() throws Exception {
        SparkSession nat = SparkSessions.start(SparkSessions.base("local[2]", "driver-attempt-native"));
        Checksum expected;
        try {
            expected = DriverAttemptJob.job(nat, null);
        } finally {
            nat.stop();
        }
        EstuaryConf fast = new EstuaryConf()
                .set(MasterConfig.APPLICATION_TIMEOUT, "3s")
                .set(MasterConfig.LIVENESS_CHECK_INTERVAL, "200ms")
                .set(WorkerConfig.HEARTBEAT_INTERVAL, "300ms");
        try (MiniCluster cluster = new MiniCluster(2, 1, fast)) {
            Path dir = Files.createTempDirectory("driver-attempt");
            Path marker = dir.resolve("maps-ended");
            Path log = dir.resolve("attempt-1.log");
            Process first = startFirstAttempt(cluster.masterEndpoint(), marker, log);
            String firstApp;
            try {
                waitFor(
                        () -> Files.exists(marker) || !first.isAlive(),
                        java.time.Duration.ofSeconds(180),
                        "the first attempt's maps end");
                assertTrue(first.isAlive(), "the first attempt died early: " + read(log));
                firstApp = estuaryAppOf(read(log));
            } finally {
                first.destroyForcibly(); // SIGKILL: no unregistering
                first.waitFor(30, TimeUnit.SECONDS);
            }
            assertTrue(cluster.dataFileCount() > 0, "the first attempt's maps left data on the workers");

            SparkSession spark = SparkSessions.start(SparkSessions.estuary(
                            SparkSessions.base(AttemptClusterManager.master(2, APP, 2), "driver-attempt-2"),
                            cluster.masterEndpoint())
                    .set(DriverAttemptJob.HEARTBEAT_INTERVAL_KEY, "500ms"));
            try {
                AtomicInteger reruns = new AtomicInteger();
                spark.sparkContext().addSparkListener(new SparkListener() {
                    @Override
                    public void onStageSubmitted(SparkListenerStageSubmitted e) {
                        if (e.stageInfo().attemptNumber() > 0) reruns.incrementAndGet();
                    }
                });
                assertEquals(expected, DriverAttemptJob.job(spark, null), "the second attempt's output");
                assertEquals(0, reruns.get(), "stage reruns of the second attempt");
                String secondApp = cluster.master().state(st -> {
                    for (String id : st.applicationIds()) {
                        if (!id.equals(firstApp)) return id;
                    }
                    return null;
                });
                assertNotEquals(firstApp, secondApp);
                assertTrue(firstApp.startsWith(APP + "_1-"), firstApp);
                assertTrue(secondApp != null && secondApp.startsWith(APP + "_2-"), secondApp);
                // While the second attempt lives, the dead one's application expires and its shuffle is deleted.
                waitFor(
                        () -> !knows(cluster, firstApp) && !anyWorkerHolds(cluster, ShuffleKey.of(firstApp, 0)),
                        java.time.Duration.ofSeconds(60),
                        "the dead attempt's application expires");
                assertTrue(knows(cluster, secondApp), "the live attempt stays");
            } finally {
                spark.stop();
                SparkSession.clearActiveSession();
                SparkSession.clearDefaultSession();
            }
        }
    }

    private static Process startFirstAttempt(String masterEndpoint, Path marker, Path log) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("java.home") + "/bin/java");
        cmd.add("-Xmx768m");
        for (String opt : System.getProperty("estuary.spark.opens", "").split(" ")) {
            if (!opt.isEmpty()) cmd.add(opt);
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
        cmd.add(DriverAttemptJob.class.getName());
        cmd.add(masterEndpoint);
        cmd.add(APP);
        cmd.add("1");
        cmd.add(marker.toString());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
        return pb.start();
    }

    /** The Estuary application id the driver's lifecycle manager logged. */
    private static String estuaryAppOf(String log) {
        Matcher m = Pattern.compile("Estuary lifecycle manager for (\\S+) listening")
                .matcher(log);
        assertTrue(m.find(), "no lifecycle manager in the first attempt's log: " + log);
        return m.group(1);
    }

    private static boolean knows(MiniCluster cluster, String app) {
        Boolean known = cluster.master().state(st -> st.hasApplication(app));
        return known;
    }

    private static boolean anyWorkerHolds(MiniCluster cluster, String shuffleKey) {
        for (Worker w : cluster.workers()) {
            if (w.registry().hasShuffle(shuffleKey)) return true;
        }
        return false;
    }

    private static String read(Path p) throws Exception {
        return new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
    }
}
