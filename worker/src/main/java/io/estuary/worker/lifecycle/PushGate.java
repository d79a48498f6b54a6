package io.estuary.worker.lifecycle;

import io.estuary.common.time.Clock;
import java.util.concurrent.TimeUnit;

/**
 * Lets pushes in until the worker starts stopping, and tells the stop when every push let in has finished its
 * synchronous part (appending to its partition writers). After {@link #close()} no push gets in, so once
 * {@link #awaitIdle} returns true no writer takes another byte and committing them captures everything
 * acknowledged. Deadlines are read on the given {@link Clock}. Thread-safe; {@link #tryEnter()} and {@link #exit()}
 * never block.
 */
public final class PushGate {
    private final Clock clock;
    private int inside;
    private boolean closed;

    public PushGate() {
        this(Clock.system());
    }

    public PushGate(Clock clock) {
        this.clock = clock;
    }

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

    /**
     * Waits until no push let in is still appending, at most until {@code deadlineNanos} (on the clock's
     * {@link Clock#nanos()}); true if none is.
     */
    public synchronized boolean awaitIdle(long deadlineNanos) throws InterruptedException {
        while (inside > 0) {
            long left = deadlineNanos - clock.nanos();
            if (left <= 0) return false;
            // Whole milliseconds, at least one: wait(0) would wait for ever.
            wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        }
        return true;
    }
}
