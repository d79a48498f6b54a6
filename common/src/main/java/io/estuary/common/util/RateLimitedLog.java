package io.estuary.common.util;

import io.estuary.common.time.Clock;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * Logs WARN lines a peer can provoke at will (failed authentications, refused requests) at most once per interval,
 * so a hostile or misconfigured peer cannot flood the log. The first line passes at once; the lines dropped after it
 * are counted and the next line that passes says how many there were. Thread-safe (lock-free).
 */
public final class RateLimitedLog {
    private final Logger log;
    private final long intervalNanos;
    private final Clock clock;
    private final AtomicLong nextNanos;
    private final AtomicLong suppressed = new AtomicLong();

    /** At most one line per {@code intervalMs} to {@code log}, timed by {@code clock}. */
    public RateLimitedLog(Logger log, long intervalMs, Clock clock) {
        if (intervalMs <= 0) throw new IllegalArgumentException("interval must be positive: " + intervalMs);
        this.log = log;
        this.intervalNanos = intervalMs * 1_000_000L;
        this.clock = clock;
        this.nextNanos = new AtomicLong(clock.nanos());
    }

    /**
     * Logs {@code format} (SLF4J placeholders) at WARN unless a line passed less than an interval ago; returns
     * whether it was logged.
     */
    public boolean warn(String format, Object... args) {
        long now = clock.nanos();
        long next = nextNanos.get();
        if (now - next < 0 || !nextNanos.compareAndSet(next, now + intervalNanos)) {
            suppressed.incrementAndGet();
            return false;
        }
        long dropped = suppressed.getAndSet(0);
        if (dropped > 0) {
            log.warn(format + " ({} similar lines suppressed before this one)", append(args, dropped));
        } else {
            log.warn(format, args);
        }
        return true;
    }

    /** Lines dropped since the last one logged. */
    public long suppressed() {
        return suppressed.get();
    }

    private static Object[] append(Object[] args, Object last) {
        Object[] out = java.util.Arrays.copyOf(args, args.length + 1);
        out[args.length] = last;
        return out;
    }
}
