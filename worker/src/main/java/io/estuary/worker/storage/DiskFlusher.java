package io.estuary.worker.storage;

import io.estuary.common.util.GuardedThreadPool;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * The threads that write one disk. Each disk has its own queue and thread limit, so a slow or failing disk delays
 * only the partitions on it. Writes of partition buffers ({@link QueuedWrite}) are tracked until settled, so that
 * when the disk fails or hangs {@link #abandonAll} gives every one of them up at once: their memory is released
 * and their partitions fail, instead of waiting behind a write that never returns. Thread-safe.
 */
public final class DiskFlusher {
    private final ExecutorService threads;
    /** Writes queued or running, not yet settled. */
    private final java.util.Set<QueuedWrite> outstanding = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private final AtomicLong flushes = new AtomicLong();
    /** Told each flush's time in nanoseconds (the worker's metrics); set once at startup. */
    private volatile LongConsumer flushTimes = nanos -> {};
    /** Recent flush time: an exponentially weighted mean, so a disk that turns slow is noticed within a few flushes. */
    private volatile double recentMicros;

    public DiskFlusher(String diskName, int threadCount) {
        this.threads = new GuardedThreadPool("flusher-" + diskName, threadCount);
    }

    /** Queues a partition buffer's write; it stays tracked until its write returns or it is abandoned. */
    void submit(QueuedWrite write) {
        write.queuedOn(this);
        outstanding.add(write);
        try {
            submit((Runnable) write);
        } catch (RejectedExecutionException e) {
            outstanding.remove(write);
            throw e;
        }
    }

    void settled(QueuedWrite write) {
        outstanding.remove(write);
    }

    /**
     * Gives up every write queued or running on this disk (it failed or hangs): queued ones never run, running ones
     * stop counting (their buffers are freed when, if ever, they return). Returns how many were given up.
     */
    int abandonAll(String why) {
        int n = 0;
        for (QueuedWrite w : outstanding) {
            w.abandon(why);
            n++;
        }
        return n;
    }

    /** Writes queued or running, not yet settled. */
    public int outstandingWrites() {
        return outstanding.size();
    }

    public void submit(Runnable flush) {
        threads.execute(() -> {
            long t0 = System.nanoTime();
            flush.run();
            long nanos = System.nanoTime() - t0;
            flushTimes.accept(nanos);
            double micros = nanos / 1000.0;
            synchronized (this) {
                recentMicros = flushes.getAndIncrement() == 0 ? micros : recentMicros * 0.8 + micros * 0.2;
            }
        });
    }

    /** Sends each flush's time (nanoseconds, on the flusher thread) to {@code listener}: must be cheap. */
    public void onFlush(LongConsumer listener) {
        this.flushTimes = listener;
    }

    /**
     * Runs {@code task} (work ahead of a flush, such as creating a partition's file) on a flusher thread after the
     * flushes queued before it, untimed: it is not a flush.
     */
    public void prepare(Runnable task) {
        threads.execute(task);
    }

    /** Runs {@code probe} on a flusher thread after the flushes queued before it, untimed (hang detection). */
    public void probe(Runnable probe) {
        threads.execute(probe);
    }

    /** Recent time of one flush, in microseconds (0 before the first). */
    public long averageFlushMicros() {
        return (long) recentMicros;
    }

    public void close() {
        threads.shutdown();
        try {
            threads.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
