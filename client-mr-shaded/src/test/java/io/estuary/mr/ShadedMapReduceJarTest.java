package io.estuary.mr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.common.config.EstuaryConf;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import io.prometheus.client.CollectorRegistry;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The jar MapReduce users deploy: a job in a separate JVM with Hadoop's class path plus only the shaded MapReduce
 * jar (no unshaded Estuary classes), through a real master and two workers, its output equal to native MapReduce's.
 * Runs after the package phase (this module binds its tests to integration-test), when the shaded jar exists.
 */
class ShadedMapReduceJarTest {

    @Test
    void wordCountRunsWithOnlyTheShadedJar() throws Exception {
        File shaded = ShadedClassPath.shadedJar();
        assertTrue(shaded.isFile(), "the shaded jar is built at package, before this test: " + shaded);
        List<String> cp = ShadedClassPath.entries();
        try (MiniCluster cluster = new MiniCluster(2, 1, new EstuaryConf())) {
            List<String> cmd = new ArrayList<>();
            cmd.add(System.getProperty("java.home") + "/bin/java");
            cmd.add("-Xmx1g");
            cmd.add("--add-opens=java.base/java.lang=ALL-UNNAMED");
            // The client's Netty is relocated, and so is the name of its leak detection setting.
            cmd.add("-Dio.estuary.shaded.io.netty.leakDetection.level=paranoid");
            cmd.add("-cp");
            cmd.add(String.join(File.pathSeparator, cp));
            cmd.add(ShadedMapReduceJob.class.getName());
            cmd.add(cluster.masterEndpoint());
            File log = File.createTempFile("shaded-mr-job", ".log");
            Process p = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(log)
                    .start();
            boolean done = p.waitFor(5, TimeUnit.MINUTES);
            if (!done) p.destroyForcibly().waitFor();
            String out = String.join(" ", cmd) + "\n---\n"
                    + new String(Files.readAllBytes(log.toPath()), StandardCharsets.UTF_8);
            assertTrue(done, "the MapReduce job did not finish in 5 minutes\n" + out);
            assertEquals(0, p.exitValue(), out);
            assertTrue(!out.contains("LEAK:"), "the shaded client leaked a Netty buffer:\n" + out);
            assertTrue(out.contains("output OK"), out);
            assertTrue(out.contains("collector loaded from " + shaded.toURI().toURL()), out);
            assertTrue(out.contains("netty inside the client: io.estuary.shaded.io.netty.channel.Channel"), out);
            // Not the files on disk: the job's end unregisters its shuffles and the workers may delete them by now.
            double pushed = 0;
            double fetched = 0;
            for (Worker w : cluster.workers()) {
                CollectorRegistry metrics = w.admin().metrics().registry();
                pushed += metrics.getSampleValue("estuary_worker_push_bytes_total");
                fetched += metrics.getSampleValue("estuary_worker_fetch_bytes_total");
            }
            assertTrue(
                    pushed > 0 && fetched > 0,
                    "workers took " + pushed + " pushed and served " + fetched
                            + " fetched bytes: did the job use Estuary?");
            Files.delete(log.toPath());
        }
    }
}
