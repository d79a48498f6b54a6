package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.common.config.EstuaryConf;
import io.estuary.testing.ClusterSecrets;
import io.estuary.worker.MiniCluster;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import scala.Tuple2;

/**
 * Spark jobs against servers that enforce authentication (a real master and two real workers on loopback), compared
 * with native output: in local mode with the secret kept in memory and with it derived from spark.authenticate's, and
 * on separate executor JVMs (local-cluster), where the driver hands the secret to executors in its SparkConf and the
 * event log must show it redacted ({@link AuthenticatedSparkJob}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AuthenticatedSparkTest {
    static final int RECORDS = 200_000;
    static final int KEYS = 5_000;

    private Path tmp;
    private MiniCluster cluster;

    @BeforeAll
    void start() throws Exception {
        tmp = Files.createTempDirectory("estuary-auth-spark");
        cluster = new MiniCluster(2, 1, ClusterSecrets.enable(new EstuaryConf(), ClusterSecrets.newFile(tmp)));
    }

    @AfterAll
    void stop() throws Exception {
        if (cluster != null) cluster.close();
    }

    static Checksum reduceByKey(SparkSession s) {
        return Checksum.of(
                ShuffleJobs.pairs(s, RECORDS, KEYS, 5).reduceByKey(Long::sum, 9).map(Tuple2::toString));
    }

    private Checksum onEstuary(SparkConf conf) {
        SparkSession s = SparkSessions.start(
                SparkSessions.estuary(conf, cluster.masterEndpoint()).set("spark.estuary.auth.enabled", "true"));
        try {
            Checksum sql = ShuffleJobs.sqlAggregation(s);
            assertEquals(nativeSql, sql, "SQL aggregation");
            return reduceByKey(s);
        } finally {
            s.stop();
        }
    }

    private Checksum nativeSql;

    @Test
    void localModeInMemoryAndDerivedFromSparkAuthenticate() {
        SparkSession n = SparkSessions.start(SparkSessions.base("local[2]", "native"));
        try {
            nativeSql = ShuffleJobs.sqlAggregation(n);
        } finally {
            n.stop();
        }
        Checksum expected = AuthenticatedSparkJob.expected(RECORDS, KEYS);
        assertEquals(expected, onEstuary(SparkSessions.base("local[2]", "auth-in-memory")));
        assertEquals(
                expected,
                onEstuary(SparkSessions.base("local[2]", "auth-derived").set("spark.authenticate", "true")));
    }

    @Test
    void separateExecutorsGetTheSecretFromTheDriverAndTheEventLogRedactsIt() throws Exception {
        String testCp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cp = new ArrayList<>();
        for (String entry : testCp.split(File.pathSeparator)) {
            if (!new File(entry).getName().matches("estuary-client-spark-.*-shaded.*")) cp.add(entry);
        }
        Path sparkHome = Files.createDirectories(tmp.resolve("spark-home"));
        Files.createDirectories(sparkHome.resolve("jars"));
        String scalaVersion = scala.util.Properties.versionNumberString().replaceAll("^(\\d+\\.\\d+).*", "$1");
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("java.home") + "/bin/java");
        cmd.add("-Xmx1g");
        for (String opt : System.getProperty("estuary.spark.opens", "").split(" ")) {
            if (!opt.isEmpty()) cmd.add(opt);
        }
        cmd.add("-cp");
        cmd.add(String.join(File.pathSeparator, cp));
        cmd.add(AuthenticatedSparkJob.class.getName());
        cmd.add(cluster.masterEndpoint());
        cmd.add(tmp.resolve("event-log").toString());
        File log = tmp.resolve("job.log").toFile();
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(log)
                .directory(sparkHome.toFile());
        pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
        pb.environment().put("SPARK_HOME", sparkHome.toString());
        pb.environment().put("SPARK_SCALA_VERSION", scalaVersion);
        Process p = pb.start();
        boolean done = p.waitFor(4, TimeUnit.MINUTES);
        if (!done) p.destroyForcibly().waitFor();
        String out = new String(Files.readAllBytes(log.toPath()), StandardCharsets.UTF_8) + "\n(executor logs under "
                + sparkHome.resolve("work") + ")";
        assertTrue(done, "the Spark job did not finish in 4 minutes\n" + out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("AUTH CLUSTER OK"), out);
        Matcher m = Pattern.compile("CHECKSUM (\\d+) (-?\\d+)").matcher(out);
        assertTrue(m.find(), out);
        assertEquals(
                AuthenticatedSparkJob.expected(RECORDS, KEYS),
                new Checksum(Long.parseLong(m.group(1)), Long.parseLong(m.group(2))));
        assertFalse(out.contains("EXECUTORS [driver"), "tasks ran in the driver, not in executors: " + out);
    }
}
