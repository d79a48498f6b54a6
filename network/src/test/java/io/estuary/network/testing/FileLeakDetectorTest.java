package io.estuary.network.testing;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakTracker;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The leak check of JVMs a test starts (Spark's executors): a leak reaches the report directory, from a detector in
 * this JVM and from a separate JVM that got only {@link FileLeakDetector#jvmOptions} and was stopped by SIGTERM
 * before it ever collected garbage.
 */
class FileLeakDetectorTest {
    @TempDir
    Path dir;

    @Test
    void aLeakIsWrittenToTheReportDirectory() throws Exception {
        FileLeakDetector<Object> detector = new FileLeakDetector<>(Object.class, 1, dir);
        assertEquals(1, FileLeakDetector.trackedProcesses(dir).size());
        assertTrue(FileLeakDetector.leaks(dir).isEmpty());
        leakOne(detector);
        for (int i = 0; i < 10 && FileLeakDetector.leaks(dir).isEmpty(); i++) {
            LeakSweep.run();
            Object kept = new Object();
            ResourceLeakTracker<Object> tracker = detector.track(kept); // reports the collected ones first
            assertTrue(tracker.close(kept));
        }
        List<String> leaks = FileLeakDetector.leaks(dir);
        assertEquals(1, leaks.size(), String.valueOf(leaks));
        assertTrue(leaks.get(0).contains("leakOne"), "the record says where it was tracked: " + leaks.get(0));
    }

    private static void leakOne(FileLeakDetector<Object> detector) {
        detector.track(new Object()).record(); // never closed
    }

    @Test
    void aJvmStartedWithTheOptionsReportsItsLeaksWhenStopped() throws Exception {
        Path out = dir.resolve("jvm.out");
        List<String> command = new ArrayList<>();
        command.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        command.addAll(Arrays.asList(FileLeakDetector.jvmOptions(dir).split(" ")));
        command.addAll(Arrays.asList("-cp", System.getProperty("java.class.path"), LeakingJvm.class.getName()));
        Process p = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
        try {
            waitFor(() -> read(out).contains(LeakingJvm.READY), "the JVM to leak a buffer: " + out);
            assertTrue(FileLeakDetector.leaks(dir).isEmpty(), "nothing collected yet");
        } finally {
            p.destroy(); // SIGTERM: the shutdown hook collects garbage and reports
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the JVM did not exit");
        }
        assertEquals(1, FileLeakDetector.trackedProcesses(dir).size(), read(out));
        List<String> leaks = FileLeakDetector.leaks(dir);
        assertEquals(1, leaks.size(), leaks + "\n" + read(out));
        assertTrue(leaks.get(0).contains("LeakingJvm.leak"), leaks.get(0));
    }

    private static String read(Path f) {
        try {
            return Files.exists(f) ? new String(Files.readAllBytes(f), StandardCharsets.UTF_8) : "";
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Leaks one pooled buffer, says so, and waits to be stopped. */
    static final class LeakingJvm {
        static final String READY = "leaked one buffer";

        public static void main(String[] args) throws Exception {
            leak();
            System.out.println(READY);
            System.out.flush();
            Thread.sleep(120_000);
        }

        private static void leak() {
            ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(64);
            b.writeLong(42);
        }
    }
}
