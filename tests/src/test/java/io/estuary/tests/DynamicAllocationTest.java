package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.testing.process.ProcessCluster;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Dynamic allocation without an external shuffle service (Spark 3.5 here; tests-spark/spark-4 compiles and runs it
 * on Spark 4.0): separate executor JVMs (local-cluster) are released after the map stage and the reduce stage reads
 * their output on new executors, with no map rerun. The driver runs in its own JVM ({@link DynamicAllocationJob})
 * because local-cluster reads SPARK_HOME and SPARK_SCALA_VERSION from the environment.
 */
class DynamicAllocationTest {

    @Test
    void idleExecutorsAreReleasedAndTheirMapOutputStaysReadable() throws Exception {
        String testCp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cp = new ArrayList<>();
        // A shaded client jar (any Spark line) would duplicate the client classes the module classes give, where
        // these are on the class path; where the shaded jar is the only client (tests-spark), it stays.
        boolean moduleClient = false;
        for (String entry : testCp.split(File.pathSeparator)) {
            moduleClient |= new File(entry).getName().matches("estuary-client-spark-[0-9.]+_.*")
                    || entry.matches(".*/client-spark/spark-[0-9.]+(-scala-[0-9.]+)?/target/classes/?");
        }
        for (String entry : testCp.split(File.pathSeparator)) {
            if (!moduleClient || !new File(entry).getName().matches("estuary-client-spark-.*-shaded.*")) cp.add(entry);
        }
        // A Spark home without a distribution: executors get their class path from spark.executor.extraClassPath.
        Path sparkHome = Files.createTempDirectory("spark-home");
        Files.createDirectories(sparkHome.resolve("jars"));
        String scalaVersion = scala.util.Properties.versionNumberString().replaceAll("^(\\d+\\.\\d+).*", "$1");
        try (ProcessCluster cluster = new ProcessCluster(2)) {
            List<String> cmd = new ArrayList<>();
            cmd.add(System.getProperty("java.home") + "/bin/java");
            cmd.add("-Xmx1g");
            for (String opt : System.getProperty("estuary.spark.opens", "").split(" ")) {
                if (!opt.isEmpty()) cmd.add(opt);
            }
            cmd.add("-cp");
            cmd.add(String.join(File.pathSeparator, cp));
            cmd.add(DynamicAllocationJob.class.getName());
            cmd.add(cluster.masterEndpoint());
            File log = File.createTempFile("dynalloc-job", ".log");
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
            String out = new String(Files.readAllBytes(log.toPath()), StandardCharsets.UTF_8);
            out = out + "\n(executor logs under " + sparkHome.resolve("work") + ")";
            assertTrue(done, "the Spark job did not finish in 4 minutes\n" + out);
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.contains("DYNALLOC OK"), out);
            assertTrue(out.contains("io plugin: org.apache.spark.shuffle.estuary.EstuaryShuffleDataIO"), out);
            Files.delete(log.toPath());
            deleteTree(sparkHome.toFile());
        }
    }

    /** The Spark home holds the executors' work folders (their logs): kept when the test fails. */
    private static void deleteTree(File f) {
        File[] children = f.listFiles();
        if (children != null) {
            for (File c : children) deleteTree(c);
        }
        f.delete();
    }
}
