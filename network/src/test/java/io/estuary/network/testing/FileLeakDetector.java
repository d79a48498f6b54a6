package io.estuary.network.testing;

import io.netty.util.ResourceLeakDetector;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Netty's leak detector for JVMs a test starts but cannot look into (Spark's local-cluster executors): every leak
 * reported is appended to {@code <pid>.leaks} in the directory named by the system property {@value #DIR_PROPERTY},
 * where the test reads it ({@link #leaks}). Chosen by Netty itself, from the JVM's options ({@link #jvmOptions}):
 * {@code io.netty.customResourceLeakDetector} names this class, so it tracks buffers from the JVM's first one.
 *
 * <p>Each JVM also writes {@code <pid>.tracking} when its buffer detector is made, so a test can tell that the JVMs
 * it started were checked at all ({@link #trackedProcesses}), and at shutdown (a SIGTERM too) it collects garbage
 * and allocates once ({@link LeakSweep}), so a buffer leaked but never collected during the JVM's life is reported
 * before it exits. Thread-safe: leaks are reported on whichever thread allocates next.
 */
public final class FileLeakDetector<T> extends ResourceLeakDetector<T> {
    public static final String DIR_PROPERTY = "estuary.test.leakReports";
    private static final AtomicBoolean SWEEP_AT_EXIT = new AtomicBoolean();
    /** This JVM's process id ("pid@host" on HotSpot; release 8 has no ProcessHandle). */
    private static final String PID =
            ManagementFactory.getRuntimeMXBean().getName().split("@")[0];

    private final Path dir;

    /** The constructor Netty calls for {@code io.netty.customResourceLeakDetector}. */
    public FileLeakDetector(Class<?> resourceType, int samplingInterval) {
        this(resourceType, samplingInterval, Paths.get(System.getProperty(DIR_PROPERTY, "leak-reports")));
        if (SWEEP_AT_EXIT.compareAndSet(false, true)) {
            Runtime.getRuntime().addShutdownHook(new Thread(FileLeakDetector::sweep, "leak-sweep-at-exit"));
        }
    }

    FileLeakDetector(Class<?> resourceType, int samplingInterval, Path dir) {
        super(resourceType, samplingInterval);
        this.dir = dir;
        append(dir, PID + ".tracking", resourceType.getName() + "\n");
    }

    /**
     * The options that make a JVM (at the paranoid level) report its leaks into {@code dir}; its class path must hold
     * this class.
     */
    public static String jvmOptions(Path dir) {
        return "-Dio.netty.leakDetection.level=paranoid -Dio.netty.customResourceLeakDetector="
                + FileLeakDetector.class.getName() + " -D" + DIR_PROPERTY + "=" + dir.toAbsolutePath();
    }

    /** The leaks reported into {@code dir} so far, one string each. */
    public static List<String> leaks(Path dir) {
        List<String> out = new ArrayList<>();
        for (Path f : files(dir, ".leaks")) {
            for (String record : read(f).split("\n\n"))
                if (!record.trim().isEmpty()) out.add(f.getFileName() + ": " + record);
        }
        return out;
    }

    /** The ids of the processes that tracked buffers with this detector, reporting into {@code dir}. */
    public static List<Long> trackedProcesses(Path dir) {
        List<Long> out = new ArrayList<>();
        for (Path f : files(dir, ".tracking")) {
            String name = f.getFileName().toString();
            out.add(Long.parseLong(name.substring(0, name.length() - ".tracking".length())));
        }
        return out;
    }

    private static void sweep() {
        try {
            LeakSweep.run();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // Report even when the logger is quiet: the leak must reach the test run.
    @Override
    protected boolean needReport() {
        return true;
    }

    @Override
    protected void reportTracedLeak(String resourceType, String records) {
        record("LEAK: " + resourceType + ".release() was not called before it was garbage-collected. Recent access "
                + "records:" + records);
        super.reportTracedLeak(resourceType, records);
    }

    @Override
    protected void reportUntracedLeak(String resourceType) {
        record("LEAK: " + resourceType + ".release() was not called before it was garbage-collected (no access "
                + "records)");
        super.reportUntracedLeak(resourceType);
    }

    private void record(String leak) {
        append(dir, PID + ".leaks", leak.replace("\n\n", "\n") + "\n\n");
    }

    private static synchronized void append(Path dir, String file, String text) {
        try {
            Files.createDirectories(dir);
            Files.write(
                    dir.resolve(file),
                    text.getBytes(StandardCharsets.UTF_8),
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot record a Netty leak report in " + dir, e);
        }
    }

    private static List<Path> files(Path dir, String suffix) {
        if (!Files.isDirectory(dir)) return Collections.emptyList();
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(f -> f.getFileName().toString().endsWith(suffix))
                    .sorted()
                    .collect(Collectors.toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String read(Path f) {
        try {
            return new String(Files.readAllBytes(f), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
