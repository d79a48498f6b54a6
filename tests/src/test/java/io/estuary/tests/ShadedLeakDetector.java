package io.estuary.tests;

import io.estuary.shaded.io.netty.buffer.ByteBuf;
import io.estuary.shaded.io.netty.buffer.PooledByteBufAllocator;
import io.estuary.shaded.io.netty.buffer.Unpooled;
import io.estuary.shaded.io.netty.util.ResourceLeakDetector;
import io.estuary.shaded.io.netty.util.ResourceLeakDetectorFactory;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The leak detector of the Netty relocated inside the shaded client jars ({@code io.estuary.shaded.io.netty}),
 * keeping every leak it reports, so a JVM that runs the shaded client can fail on a leak (the network test-jar's
 * {@code RecordingLeakDetector} sees only the unshaded {@code io.netty}). Only for JVMs whose class path holds a
 * shaded client jar: {@link ShadedJarJob} and the legacy Spark modules (through {@link ShadedLeakCheckExtension}).
 * {@link #install()} must run before the client allocates its first buffer. Thread-safe.
 */
public final class ShadedLeakDetector<T> extends ResourceLeakDetector<T> {
    private static final ConcurrentLinkedQueue<String> LEAKS = new ConcurrentLinkedQueue<>();
    private static volatile boolean installed;

    @SuppressWarnings("deprecation")
    public ShadedLeakDetector(Class<?> resourceType, int samplingInterval) {
        super(resourceType, samplingInterval);
    }

    /** Makes the relocated Netty track every buffer (paranoid) with detectors of this class. */
    public static synchronized void install() {
        if (installed) return;
        installed = true;
        ResourceLeakDetector.setLevel(Level.PARANOID);
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new ResourceLeakDetectorFactory() {
            @Override
            @SuppressWarnings("deprecation")
            public <R> ResourceLeakDetector<R> newResourceLeakDetector(
                    Class<R> resource, int samplingInterval, long maxActive) {
                return new ShadedLeakDetector<>(resource, samplingInterval);
            }
        });
    }

    /** Null when the relocated Netty's buffers are tracked here, else why not (a buffer was made before install). */
    public static String notInstalledReason() {
        try {
            Field f = Class.forName("io.estuary.shaded.io.netty.buffer.AbstractByteBuf")
                    .getDeclaredField("leakDetector");
            f.setAccessible(true);
            Object d = f.get(null);
            return d instanceof ShadedLeakDetector
                    ? null
                    : "the relocated Netty's buffer leak detector is a "
                            + d.getClass().getName() + ", created before " + ShadedLeakDetector.class.getName()
                            + " was installed";
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null; // another Netty version: cannot check; the leaks that are recorded still fail
        }
    }

    /**
     * Collects garbage until the reference handler has caught up, allocates (at the paranoid level each allocation
     * reports buffers collected unreleased), then takes the leaks reported so far, each starting with "LEAK:".
     */
    public static List<String> collectLeaks() throws InterruptedException {
        for (int round = 0; round < 2; round++) {
            ReferenceQueue<Object> queue = new ReferenceQueue<>();
            WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
            System.gc();
            queue.remove(2000);
            sentinel.clear();
            Thread.sleep(10);
            ByteBuf direct = PooledByteBufAllocator.DEFAULT.directBuffer(1);
            direct.release();
            Unpooled.buffer(1).release();
        }
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
        LEAKS.add("LEAK: (relocated Netty) " + resourceType + ".release() was not called before it was "
                + "garbage-collected." + records);
        super.reportTracedLeak(resourceType, records);
    }

    @Override
    protected void reportUntracedLeak(String resourceType) {
        LEAKS.add("LEAK: (relocated Netty) " + resourceType + ".release() was not called before it was "
                + "garbage-collected (no access records)");
        super.reportUntracedLeak(resourceType);
    }
}
