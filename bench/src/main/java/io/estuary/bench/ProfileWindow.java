package io.estuary.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.text.ParseException;
import java.util.concurrent.atomic.AtomicLong;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * The timed part of a benchmark run as bench/profile.sh sees it, when {@code -Dbench.profile.dir=DIR} is set: a JFR
 * recording of this driver JVM (where local mode runs every map and reduce task), this process's CPU time and the
 * shuffle bytes Spark's tasks report written, from after the warm-up to the end of the workloads. The window is
 * signalled through files in DIR so that the script records the workers over the same span: {@code warm} when it
 * opens (the script answers {@code workers-recording} once the workers record too), {@code done} when it closes.
 * Without the property every method does nothing. Not thread-safe: the benchmark's main thread only.
 */
final class ProfileWindow {
    private final Path dir;
    private final AtomicLong shuffleBytes = new AtomicLong();
    private Recording recording;
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

    /** Opens the window: starts recording, then waits (bounded) until the script says the workers record too. */
    void open() throws IOException {
        if (dir == null) return;
        try {
            recording = new Recording(Configuration.getConfiguration("profile"));
        } catch (ParseException e) {
            throw new IOException("the JDK's JFR profile settings do not parse", e);
        }
        recording.setName("estuary-bench-driver");
        recording.start();
        shuffleBytes.set(0);
        cpuNanosAtOpen = processCpuNanos();
        Files.write(dir.resolve("warm"), new byte[0]);
        Path answer = dir.resolve("workers-recording");
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!Files.exists(answer) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting for the workers' recordings", e);
            }
        }
        if (!Files.exists(answer)) throw new IOException("bench/profile.sh did not start the workers' recordings");
    }

    /** Closes the window: the recording to DIR/driver.jfr, CPU seconds and shuffle bytes to DIR/driver.txt. */
    void close() throws IOException {
        if (dir == null || recording == null) return;
        double cpuSeconds = (processCpuNanos() - cpuNanosAtOpen) / 1e9;
        recording.stop();
        recording.dump(dir.resolve("driver.jfr"));
        recording.close();
        Files.write(
                dir.resolve("driver.txt"),
                String.format("cpu_seconds %.3f%nshuffle_bytes %d%n", cpuSeconds, shuffleBytes.get())
                        .getBytes(StandardCharsets.US_ASCII));
        Files.write(dir.resolve("done"), new byte[0]);
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }
}
