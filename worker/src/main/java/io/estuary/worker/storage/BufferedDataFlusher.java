package io.estuary.worker.storage;

import io.estuary.common.util.GuardedScheduledExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes partly filled flush buffers before they fill up: under memory pressure the largest first, until what is
 * still buffered (not yet queued for a write) is below the resume watermark; and any buffer older than the
 * maximum age. Without it, memory held by many partly filled buffers could reach the limit with none of them full,
 * and a paused worker would never resume.
 *
 * <p>Runs on one thread of its own, which also ticks the {@link MemoryTracker} every {@link #TICK_MS}. Thread-safe:
 * writers are tracked in a concurrent set and dropped once retired.
 */
public final class BufferedDataFlusher implements MemoryTracker.Listener {
    private static final Logger LOG = LoggerFactory.getLogger(BufferedDataFlusher.class);
    static final long TICK_MS = 100;

    private final MemoryTracker memory;
    private final long maxAgeNanos;
    private final Set<PartitionFileWriter> writers = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService thread = new GuardedScheduledExecutor("worker-buffer-flusher");
    private final io.estuary.common.time.Clock clock;
    private long lastAgeScan;
    private volatile long earlyFlushes;

    public BufferedDataFlusher(MemoryTracker memory, long maxAgeMs) {
        this(memory, maxAgeMs, io.estuary.common.time.Clock.system());
    }

    /** {@code clock} must be the one the tracked writers date their buffers with. */
    public BufferedDataFlusher(MemoryTracker memory, long maxAgeMs, io.estuary.common.time.Clock clock) {
        this.clock = clock;
        this.lastAgeScan = clock.nanos();
        this.memory = memory;
        this.maxAgeNanos = TimeUnit.MILLISECONDS.toNanos(maxAgeMs);
        memory.addListener(this);
        thread.scheduleWithFixedDelay(this::tick, TICK_MS, TICK_MS, TimeUnit.MILLISECONDS);
    }

    /** Starts watching a new writer. */
    public void track(PartitionFileWriter w) {
        writers.add(w);
    }

    @Override
    public void onPressure(MemoryPressure level) {
        if (level == MemoryPressure.NORMAL) return;
        try {
            thread.execute(this::relieve);
        } catch (RejectedExecutionException e) {
            // shutting down
        }
    }

    private void tick() {
        try {
            memory.tick();
            long now = clock.nanos();
            if (now - lastAgeScan >= maxAgeNanos / 4) {
                lastAgeScan = now;
                flushOlderThan(now - maxAgeNanos);
            }
        } catch (RuntimeException e) {
            LOG.warn("Flushing buffered data failed", e);
        }
    }

    /** Queues the largest partial buffers for writing until the rest is below the resume watermark. */
    void relieve() {
        long excess = memory.flushToResume();
        if (excess <= 0) return;
        List<PartitionFileWriter> candidates = new ArrayList<>();
        List<Integer> sizes = new ArrayList<>();
        for (PartitionFileWriter w : writers) {
            if (w.retired()) {
                writers.remove(w);
                continue;
            }
            int b = w.bufferedBytes();
            if (b > 0) {
                candidates.add(w);
                sizes.add(b);
            }
        }
        Integer[] order = new Integer[candidates.size()];
        for (int i = 0; i < order.length; i++) order[i] = i;
        java.util.Arrays.sort(order, (a, b) -> Integer.compare(sizes.get(b), sizes.get(a)));
        for (int i : order) {
            if (excess <= 0) break;
            long freed = candidates.get(i).flushBuffered();
            if (freed > 0) earlyFlushes++;
            excess -= freed;
        }
    }

    private void flushOlderThan(long cutoffNanos) {
        for (PartitionFileWriter w : writers) {
            if (w.retired()) {
                writers.remove(w);
                continue;
            }
            long since = w.bufferedSinceNanos();
            if (since != 0 && since - cutoffNanos < 0 && w.flushBuffered() > 0) earlyFlushes++;
        }
    }

    /** Drops the buffered data of every partition on a failed disk; returns how many partitions held some. */
    int diskFailed(Disk disk, String why) {
        int n = 0;
        for (PartitionFileWriter w : writers) {
            if (w.disk() != disk) continue;
            if (w.bufferedBytes() > 0) n++;
            w.diskFailed(why);
        }
        return n;
    }

    /** Buffers written before they were full (pressure or age). Read on the flusher's thread or in tests. */
    public long earlyFlushes() {
        return earlyFlushes;
    }

    /** Writers being watched. */
    public int tracked() {
        return writers.size();
    }

    public void close() {
        thread.shutdownNow();
    }
}
