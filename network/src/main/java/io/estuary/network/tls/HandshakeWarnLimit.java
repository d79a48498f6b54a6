package io.estuary.network.tls;

import io.estuary.common.time.Clock;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How often a failed TLS handshake may be logged: at most one line per interval, counting those left out so the next
 * line can say how many. Failed handshakes are provoked at will by anyone who can connect, so the limit is shared by
 * every server of the process ({@link #PER_PROCESS}). Time is read on the given {@link Clock}. Thread-safe, lock-free.
 */
final class HandshakeWarnLimit {
    /** The limit every server of this process shares: one line a second. */
    static final HandshakeWarnLimit PER_PROCESS = new HandshakeWarnLimit(TimeUnit.SECONDS.toNanos(1), Clock.system());

    private final long everyNanos;
    private final Clock clock;
    private final AtomicLong next;
    private final AtomicLong unlogged = new AtomicLong();

    HandshakeWarnLimit(long everyNanos, Clock clock) {
        this.everyNanos = everyNanos;
        this.clock = clock;
        this.next = new AtomicLong(clock.nanos());
    }

    /**
     * Whether a failure may be logged now: -1 if not (it is counted as left out), else how many were left out since the
     * last line logged.
     */
    long tryLog() {
        long now = clock.nanos();
        long due = next.get();
        if (now - due >= 0 && next.compareAndSet(due, now + everyNanos)) return unlogged.getAndSet(0);
        unlogged.incrementAndGet();
        return -1;
    }
}
