package io.estuary.worker.storage;

import io.estuary.common.util.GuardedThreadPool;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Shrinks the {@link PartitionCache} whenever the {@link MemoryTracker} reports holding at or above its resume mark,
 * on a thread of its own (tracker listeners must not block), one shrink queued at a time. Thread-safe.
 */
final class CacheShrinker implements MemoryTracker.Listener, AutoCloseable {
    private final PartitionCache cache;
    private final MemoryTracker memory;
    private final AtomicBoolean queued = new AtomicBoolean();
    private final ExecutorService thread;

    CacheShrinker(PartitionCache cache, MemoryTracker memory) {
        this.cache = cache;
        this.memory = memory;
        this.thread = cache.enabled() ? new GuardedThreadPool("worker-cache-shrink", 1) : null;
    }

    @Override
    public void onPressure(MemoryPressure level) {
        if (thread == null
                || cache.bytes() == 0
                || memory.held() < memory.watermarks().resume()) return;
        if (!queued.compareAndSet(false, true)) return;
        try {
            thread.execute(() -> {
                queued.set(false);
                cache.shrink();
            });
        } catch (RejectedExecutionException e) {
            queued.set(false); // closed
        }
    }

    @Override
    public void close() {
        if (thread != null) thread.shutdownNow();
    }
}
