package io.estuary.network.testing;

import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Netty's leak detector, but every leak it reports is also kept here, so a test run can fail on it instead of
 * leaving a log line nobody reads. {@link #install()} must run before Netty creates its detectors (before the first
 * {@code ByteBuf} class is initialized); {@link LeakCheckExtension} does so when JUnit starts. Thread-safe: leaks are
 * reported on whichever thread allocates next.
 */
public final class RecordingLeakDetector<T> extends ResourceLeakDetector<T> {
    private static final ConcurrentLinkedQueue<String> LEAKS = new ConcurrentLinkedQueue<>();
    private static volatile boolean installed;

    public RecordingLeakDetector(Class<?> resourceType, int samplingInterval) {
        super(resourceType, samplingInterval);
    }

    /** Makes Netty create detectors of this class from now on, at the paranoid level (every buffer tracked). */
    public static synchronized void install() {
        if (installed) return;
        installed = true;
        ResourceLeakDetector.setLevel(Level.PARANOID);
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new ResourceLeakDetectorFactory() {
            @Override
            @SuppressWarnings("deprecation")
            public <R> ResourceLeakDetector<R> newResourceLeakDetector(
                    Class<R> resource, int samplingInterval, long maxActive) {
                return new RecordingLeakDetector<>(resource, samplingInterval);
            }
        });
    }

    /**
     * Null when buffers are tracked by a detector of this class, else why not: Netty made its buffer detector before
     * {@link #install()} ran (something touched a buffer first), so leaks would go unnoticed.
     */
    public static String notInstalledReason() {
        try {
            Class<?> c = Class.forName("io.netty.buffer.AbstractByteBuf");
            Field f = c.getDeclaredField("leakDetector");
            f.setAccessible(true);
            Object d = f.get(null);
            return d instanceof RecordingLeakDetector
                    ? null
                    : "Netty's buffer leak detector is a " + d.getClass().getName() + ", created before "
                            + RecordingLeakDetector.class.getName() + " was installed";
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null; // another Netty version: cannot check, the leaks that are recorded still fail
        }
    }

    /** Takes the leaks reported since the last call. */
    static List<String> drain() {
        List<String> out = new ArrayList<>();
        for (String s; (s = LEAKS.poll()) != null; ) out.add(s);
        return out;
    }

    // Report even when the logger is quiet: the leak must reach the test run.
    @Override
    protected boolean needReport() {
        return true;
    }

    @Override
    protected void reportTracedLeak(String resourceType, String records) {
        LEAKS.add("LEAK: " + resourceType + ".release() was not called before it was garbage-collected. Recent access "
                + "records:" + records);
        super.reportTracedLeak(resourceType, records);
    }

    @Override
    protected void reportUntracedLeak(String resourceType) {
        LEAKS.add("LEAK: " + resourceType + ".release() was not called before it was garbage-collected (no access "
                + "records)");
        super.reportUntracedLeak(resourceType);
    }
}
