package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.testing.process.ServerProcess;
import io.estuary.worker.MiniCluster;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The jar users deploy: a Spark job in a separate JVM with Spark's class path plus only the shaded client jar
 * (no unshaded Estuary classes), through a real cluster. This module runs it on Spark 3.5 with spark-3-shaded for
 * Scala 2.12 ({@code estuary.shaded.jar}), since its own class path holds the module classes. The modules of
 * tests-spark (3.3 to 4.1, 1.6 and 2.4) need no such test: they run all their jobs with only their line's shaded jar
 * on the class path (tests-spark/shaded-src's ShadedClassPathTest checks that premise).
 */
class ShadedJarTest {

    @Test
    void sparkJobRunsWithOnlyTheShadedJar() throws Exception {
        File shaded = new File(System.getProperty("estuary.shaded.jar")).getCanonicalFile();
        assertTrue(shaded.isFile(), "build the shaded jar first (mvn verify builds it before this module): " + shaded);
        String testCp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cp = new ArrayList<>();
        for (String entry : testCp.split(File.pathSeparator)) {
            String name = new File(entry).getName();
            // Module jars, or their class folders when the reactor ran no package phase (any Spark line's adapter).
            boolean estuaryModule = name.startsWith("estuary-")
                    || entry.matches(".*/(common|network|server-common|master|worker|cli|client|test-support"
                            + "|client-spark/[^/]+)/target/(test-)?classes/?");
            if (!estuaryModule) cp.add(entry);
        }
        cp.add(shaded.getAbsolutePath());
        try (MiniCluster cluster = new MiniCluster(2, 1, new EstuaryConf())) {
            List<String> cmd = new ArrayList<>();
            cmd.add(System.getProperty("java.home") + "/bin/java");
            cmd.add("-Xmx1g");
            // The client's Netty is relocated, and so is the name of its leak detection setting.
            cmd.add("-Dio.estuary.shaded.io.netty.leakDetection.level=paranoid");
            for (String opt : System.getProperty("estuary.spark.opens", "").split(" ")) {
                if (!opt.isEmpty()) cmd.add(opt);
            }
            cmd.add("-cp");
            cmd.add(String.join(File.pathSeparator, cp));
            cmd.add(ShadedJarJob.class.getName());
            cmd.add(cluster.masterEndpoint());
            File log = File.createTempFile("shaded-job", ".log");
            ProcessBuilder pb =
                    new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log);
            pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
            Process p = pb.start();
            assertTrue(p.waitFor(5, TimeUnit.MINUTES), "the Spark job did not finish in 5 minutes");
            String out = new String(Files.readAllBytes(log.toPath()), StandardCharsets.UTF_8);
            out = String.join(" ", cmd) + "\n---\n" + out;
            ServerProcess.checkNoLeaks("the Spark job on the shaded client", out); // its relocated Netty's leaks too
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.contains("checksum OK"), out);
            assertTrue(out.contains("manager loaded from " + shaded.toURI().toURL()), out);
            assertTrue(out.contains("netty inside the client: io.estuary.shaded.io.netty.channel.Channel"), out);
            assertTrue(out.contains("lz4 inside the client: io.estuary.shaded.net.jpountz.lz4.LZ4Factory"), out);
            assertTrue(out.contains("lz4 compresses natively: true"), out);
            // The JVM opens java.nio (as Spark's do): the client's relocated Netty allocates without a Cleaner.
            assertTrue(out.contains("relocated netty without cleaner: true"), out);
        }
    }
}
