package io.estuary.worker.storage;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One buffer handed to a disk's flusher, which the disk's failure may abandon. Settled exactly once: by its write
 * returning, or by {@link #abandon} when its disk is declared failed or hung. A write abandoned while queued never
 * runs and its buffer is freed at once; one abandoned while running stops counting at once (its memory, its
 * partition's pending writes) and its buffer is freed when the write returns, if ever, since a thread may still be
 * reading it. So a hung disk holds at most one buffer per flusher thread, uncounted, instead of the worker's memory.
 *
 * <p>Thread-safe: the state moves by compare-and-set; the subclass's callbacks run once each.
 */
abstract class QueuedWrite implements Runnable {
    private static final int QUEUED = 0;
    private static final int RUNNING = 1;
    private static final int DONE = 2;

    private final AtomicInteger state = new AtomicInteger(QUEUED);
    private final AtomicBoolean settled = new AtomicBoolean();
    private volatile DiskFlusher flusher;

    void queuedOn(DiskFlusher flusher) {
        this.flusher = flusher;
    }

    @Override
    public final void run() {
        if (!state.compareAndSet(QUEUED, RUNNING)) return; // abandoned while queued: already settled
        Throwable error = null;
        try {
            write();
        } catch (IOException | RuntimeException e) {
            error = e;
        } finally {
            state.set(DONE);
            freeBuffer();
            settle(error, false);
        }
    }

    /** Gives the write up because its disk failed or hangs ({@code why}). Idempotent. */
    final void abandon(String why) {
        if (state.compareAndSet(QUEUED, DONE)) freeBuffer();
        settle(new IOException(why), true);
    }

    private void settle(Throwable error, boolean abandoned) {
        if (!settled.compareAndSet(false, true)) return;
        DiskFlusher f = flusher;
        if (f != null) f.settled(this);
        finished(error, abandoned);
    }

    /** Writes the buffer; on a flusher thread. */
    abstract void write() throws IOException;

    /** Frees the buffer: after the write returned, or when abandoned before it started. */
    abstract void freeBuffer();

    /** Called once: the write succeeded ({@code error} null), failed, or was abandoned. */
    abstract void finished(Throwable error, boolean abandoned);
}
