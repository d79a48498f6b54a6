package io.estuary.worker.lifecycle;

/**
 * Lets pushes in until the worker starts stopping, and tells the stop when every push let in has finished its
 * synchronous part (appending to its partition writers). After {@link #close()} no push gets in, so once
 * {@link #awaitIdle} returns true no writer takes another byte and committing them captures everything
 * acknowledged. Thread-safe; {@link #tryEnter()} and {@link #exit()} never block.
 */
public final class PushGate {
    private int inside;
    private boolean closed;

    /** True if the push may go on; the caller must then call {@link #exit()} once its appends are done. */
    public synchronized boolean tryEnter() {
        if (closed) return false;
        inside++;
        return true;
    }

    public synchronized void exit() {
        if (--inside == 0 && closed) notifyAll();
    }

    public synchronized boolean isOpen() {
        return !closed;
    }

    /** Lets no more pushes in. Idempotent. */
    public synchronized void close() {
        closed = true;
    }

    /** Waits until no push let in is still appending, at most until {@code deadlineMs}; true if none is. */
    public synchronized boolean awaitIdle(long deadlineMs) throws InterruptedException {
        while (inside > 0) {
            long left = deadlineMs - System.currentTimeMillis();
            if (left <= 0) return false;
            wait(left);
        }
        return true;
    }
}
