package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.testing.process.ProcessCluster;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.Accumulator;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Spark 1.6 / 2.4 (whichever this module's class path holds) in local mode with only the line's shaded Estuary jar,
 * against a master and three workers in their own JVMs: every job of {@link LegacyJobs} matches native shuffle (its
 * output, and the shuffle records Spark's own task metrics show written and read), then a worker is killed and the
 * next read of a shuffle reruns its maps (a new generation) and still matches. A buffer leaked by the shaded jar's
 * relocated Netty fails the class.
 */
@ExtendWith(ShadedLeakCheckExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LegacySparkShuffleTest {
    private static final int MAPS = 8;
    private final Map<String, Checksum> nativeResults = new HashMap<>();
    private final Map<String, LegacyShuffleMetricsListener.Totals> nativeMetrics = new HashMap<>();
    private LegacyShuffleMetricsListener metrics;
    private Checksum nativeRerunJob;
    private ProcessCluster cluster;
    private JavaSparkContext sc;

    static SparkConf base(String appName) {
        return new SparkConf()
                .setMaster("local[2,4]")
                .setAppName(appName)
                .set("spark.driver.host", "127.0.0.1")
                .set("spark.driver.bindAddress", "127.0.0.1")
                .set("spark.ui.enabled", "false")
                .set("spark.default.parallelism", "4");
    }

    /** The maps of the job that loses a worker; counts the map attempts that ran. */
    static JavaPairRDD<Integer, Iterable<Long>> grouped(JavaSparkContext sc, Accumulator<Integer> mapRuns) {
        List<Integer> values = new ArrayList<>();
        for (int i = 0; i < 160_000; i++) values.add(i);
        return sc.parallelize(values, MAPS)
                .mapPartitionsWithIndex(
                        (Integer idx, java.util.Iterator<Integer> it) -> {
                            mapRuns.add(1);
                            List<scala.Tuple2<Integer, Long>> out = new ArrayList<>();
                            while (it.hasNext()) {
                                int i = it.next();
                                out.add(new scala.Tuple2<>((int) LegacyJobs.key(i, 9_000), (long) i));
                            }
                            return out.iterator();
                        },
                        false)
                .mapToPair(t -> t)
                .groupByKey(8);
    }

    static JavaRDD<String> summary(JavaPairRDD<Integer, Iterable<Long>> grouped) {
        return grouped.map(kv -> {
            long n = 0;
            long sum = 0;
            for (long v : kv._2()) {
                n++;
                sum += v;
            }
            return kv._1() + "=" + n + ":" + sum;
        });
    }

    @BeforeAll
    void runNativeThenStartEstuary() throws Exception {
        JavaSparkContext nat = new JavaSparkContext(base("native"));
        try {
            LegacyShuffleMetricsListener nativeListener = LegacyShuffleMetricsListener.on(nat);
            for (Map.Entry<String, Function<JavaSparkContext, Checksum>> job :
                    LegacyJobs.all().entrySet()) {
                nativeListener.reset();
                nativeResults.put(job.getKey(), job.getValue().apply(nat));
                nativeMetrics.put(job.getKey(), nativeListener.totals(nat));
            }
            nativeRerunJob = Checksum.of(summary(grouped(nat, nat.accumulator(0))));
        } finally {
            nat.stop();
        }
        cluster = new ProcessCluster(3);
        sc = new JavaSparkContext(base("estuary")
                .set("spark.shuffle.manager", "org.apache.spark.shuffle.estuary.EstuaryShuffleManager")
                .set("spark.estuary.master.endpoints", cluster.masterEndpoint())
                .set("spark.estuary.client.push.retryWait", "100ms")
                .set("spark.estuary.client.push.replicate", "false")
                // The killed worker never returns: waiting the default for it to restart would only delay the rerun.
                .set("spark.estuary.client.fetch.unreachableTimeout", "2s")
                .set("spark.estuary.client.commit.unreachableTimeout", "2s"));
        metrics = LegacyShuffleMetricsListener.on(sc);
    }

    @AfterAll
    void stop() throws Exception {
        if (sc != null) sc.stop();
        if (cluster != null) cluster.close();
    }

    @TestFactory
    @Order(1)
    List<DynamicTest> estuaryMatchesNativeShuffle() {
        List<DynamicTest> tests = new ArrayList<>();
        for (Map.Entry<String, Function<JavaSparkContext, Checksum>> job :
                LegacyJobs.all().entrySet()) {
            tests.add(DynamicTest.dynamicTest(job.getKey(), () -> {
                metrics.reset();
                assertEquals(
                        nativeResults.get(job.getKey()),
                        job.getValue().apply(sc),
                        job.getKey() + ": Estuary's output differs from native shuffle's");
                assertSparkSeesTheShuffle(job.getKey(), nativeMetrics.get(job.getKey()), metrics.totals(sc));
            }));
        }
        return tests;
    }

    /**
     * Spark's own task metrics (listener, UI) show Estuary's shuffle as they show native shuffle's: the same records
     * written and read, and bytes and write time wherever records moved.
     */
    private static void assertSparkSeesTheShuffle(
            String job, LegacyShuffleMetricsListener.Totals expected, LegacyShuffleMetricsListener.Totals actual) {
        System.out.println(job + " metrics: native " + expected + "; Estuary " + actual);
        assertEquals(expected.recordsWritten, actual.recordsWritten, job + ": shuffle records written");
        assertEquals(expected.recordsRead, actual.recordsRead, job + ": shuffle records read");
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

    /**
     * The first action writes and reads the shuffle; a worker is killed; the second action's reducers find its data
     * gone, and Spark reruns every map into a new generation (there are no replicas).
     */
    @Test
    @Order(2)
    void stageRerunAfterWorkerKilled() throws Exception {
        Accumulator<Integer> mapRuns = sc.accumulator(0);
        JavaPairRDD<Integer, Iterable<Long>> grouped = grouped(sc, mapRuns);
        JavaRDD<String> out = summary(grouped);
        assertEquals(nativeRerunJob, Checksum.of(out));
        assertEquals(MAPS, (int) mapRuns.value(), "maps ran more than once before any worker was lost");
        cluster.workers().kill(1);
        assertEquals(nativeRerunJob, Checksum.of(out), "after a worker was killed");
        assertTrue(mapRuns.value() > MAPS, "the lost worker's partitions can only come back by rerunning the maps");
        System.out.println("STAGE RERUN on " + org.apache.spark.package$.MODULE$.SPARK_VERSION() + ": map attempts "
                + mapRuns.value() + " for " + MAPS + " maps");
    }

    /**
     * Against servers that enforce authentication and serve TLS on their cluster-internal and data ports, with the
     * application secret derived from Spark's own (spark.authenticate through this line's SecurityManager), replicas
     * on, and the driver's own port on TLS: the job still matches native shuffle. The servers' ports accept only TLS,
     * so the job's success proves the shaded jar's relocated Netty spoke TLS; each port is also checked to present the
     * cluster's certificate. Runs last: this line allows one SparkContext per JVM.
     */
    @Test
    @Order(3)
    void authenticatedWithTheSecretDerivedFromSparks() throws Exception {
        sc.stop();
        sc = null;
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("estuary-legacy-auth");
        java.nio.file.Path secretFile = io.estuary.testing.ClusterSecrets.newFile(dir);
        io.estuary.testing.ClusterTls tls = io.estuary.testing.ClusterTls.create(dir);
        List<String> settings = new ArrayList<>(tls.serverSettings());
        settings.add("estuary.auth.enabled=true");
        settings.add("estuary.auth.cluster.secretFile=" + secretFile);
        try (ProcessCluster secured = ProcessCluster.withSettings(2, settings.toArray(new String[0]))) {
            SparkConf conf = base("estuary-auth")
                    .set("spark.shuffle.manager", "org.apache.spark.shuffle.estuary.EstuaryShuffleManager")
                    .set("spark.estuary.master.endpoints", secured.masterEndpoint())
                    .set("spark.estuary.auth.enabled", "true")
                    .set("spark.estuary.client.push.replicate", "true")
                    .set("spark.authenticate", "true")
                    .set(
                            "spark.authenticate.secret",
                            java.util.UUID.randomUUID().toString());
            for (Map.Entry<String, String> kv : tls.jobSettings("spark.").entrySet())
                conf.set(kv.getKey(), kv.getValue());
            sc = new JavaSparkContext(conf);
            assertEquals(nativeRerunJob, Checksum.of(summary(grouped(sc, sc.accumulator(0)))));
            sc.stop();
            sc = null;
            String master = secured.masterEndpoint();
            int[] ports = {
                Integer.parseInt(master.substring(master.lastIndexOf(':') + 1)),
                secured.workers().rpcPort(0),
                secured.workers().pushPort(0),
                secured.workers().fetchPort(0),
                secured.workers().rpcPort(1),
                secured.workers().pushPort(1),
                secured.workers().fetchPort(1)
            };
            for (int port : ports) {
                assertEquals(
                        io.estuary.testing.ClusterTls.SUBJECT,
                        tls.peerCertificate(port).getSubjectX500Principal().getName(),
                        "port " + port);
            }
        }
    }
}
