package io.estuary.worker.storage;

import io.netty.util.internal.PlatformDependent;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;

/**
 * This JVM's direct memory: the JDK's count of direct buffers with a cleaner plus Netty's count of those it allocates
 * without one, against the JVM's limit ({@code -XX:MaxDirectMemorySize}, else the heap's). Both counts are atomic
 * counters, cheap to read. Stateless and thread-safe.
 */
public final class JvmDirectMemory implements MemoryTracker.DirectMemory {
    public static final JvmDirectMemory INSTANCE = new JvmDirectMemory();

    private static final BufferPoolMXBean JDK_DIRECT = jdkDirectPool();

    private JvmDirectMemory() {}

    private static BufferPoolMXBean jdkDirectPool() {
        for (BufferPoolMXBean p : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if ("direct".equals(p.getName())) return p;
        }
        return null;
    }

    @Override
    public long used() {
        long jdk = JDK_DIRECT == null ? 0 : Math.max(0, JDK_DIRECT.getMemoryUsed());
        return jdk + Math.max(0, PlatformDependent.usedDirectMemory());
    }

    @Override
    public long max() {
        return PlatformDependent.maxDirectMemory();
    }
}
