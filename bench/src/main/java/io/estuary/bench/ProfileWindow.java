package io.estuary.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * The timed part of a benchmark run as bench/profile.sh sees it, when {@code -Dbench.profile.dir=DIR} is set: this
 * process's CPU time and the shuffle bytes Spark's tasks report written, from after the warm-up to the end of the
 * workloads. The window is signalled through files in DIR so that the script profiles this driver JVM (where local
 * mode runs every map and reduce task) and the workers over the same span: {@code warm} when it opens (the script
 * answers {@code recording} once every process records), {@code done} when it closes (the script answers
 * {@code dumped} once it has the profiles, so this JVM does not exit before). Without the property every method does
 * nothing. Not thread-safe: the benchmark's main thread only.
 */
final class ProfileWindow {
    private final Path dir;
    private final AtomicLong shuffleBytes = new AtomicLong();
    private boolean opened;
    private long cpuNanosAtOpen;

    private ProfileWindow(Path dir) {
        this.dir = dir;
    }

    static ProfileWindow fromSystemProperties(JavaSparkContext sc) {
        String d = System.getProperty("bench.profile.dir");
        ProfileWindow w = new ProfileWindow(d == null ? null : Paths.get(d));
        if (d != null) {
            sc.sc().addSparkListener(new SparkListener() {
                @Override
                public void onTaskEnd(SparkListenerTaskEnd end) {
                    if (end.taskMetrics() != null) {
                        w.shuffleBytes.addAndGet(
                                end.taskMetrics().shuffleWriteMetrics().bytesWritten());
                    }
                }
            });
        }
        return w;
    }

    /** Opens the window, then waits (bounded) until the script says every process is being profiled. */
    void open() throws IOException {
        if (dir == null) return;
        Files.write(dir.resolve("warm"), new byte[0]);
        awaitAnswer("recording", "start the profiles");
        shuffleBytes.set(0);
        cpuNanosAtOpen = processCpuNanos();
        opened = true;
    }

    /** Closes the window: CPU seconds and shuffle bytes to DIR/driver.txt; waits until the profiles are dumped. */
    void close() throws IOException {
        if (dir == null || !opened) return;
        double cpuSeconds = (processCpuNanos() - cpuNanosAtOpen) / 1e9;
        Files.write(
                dir.resolve("driver.txt"),
                String.format("cpu_seconds %.3f%nshuffle_bytes %d%n", cpuSeconds, shuffleBytes.get())
                        .getBytes(StandardCharsets.US_ASCII));
        Files.write(dir.resolve("done"), new byte[0]);
        awaitAnswer("dumped", "dump the profiles");
    }

    private void awaitAnswer(String file, String what) throws IOException {
        Path answer = dir.resolve(file);
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!Files.exists(answer) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting for bench/profile.sh to " + what, e);
            }
        }
        if (!Files.exists(answer)) throw new IOException("bench/profile.sh did not " + what + " within 60 s");
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }
}
