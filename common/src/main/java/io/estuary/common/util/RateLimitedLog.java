package io.estuary.common.util;

import io.estuary.common.time.Clock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * WARN lines that a peer can provoke at will (failed handshakes, refused requests), kept from flooding the log: at
 * most one line per key per interval, and the next line logged for a key says how many were left out meanwhile.
 * {@link #warn} uses one key for everything; {@link #warnFor} takes the key, which should come from a small fixed set
 * (request types, statuses), never from what a peer sends, so the map stays bounded. Thread-safe.
 */
public final class RateLimitedLog {
    private static final String ANY = "";

    private final Logger log;
    private final long intervalNanos;
    private final Clock clock;
    private final Map<String, Window> windows = new ConcurrentHashMap<>();

    /** The key's last logged line and what was left out since. Guarded by itself. */
    private static final class Window {
        long lastNanos;
        boolean logged;
        long suppressed;
    }

    /** At most one line per key per {@code intervalMs} to {@code log}, timed by {@code clock}. */
    public RateLimitedLog(Logger log, long intervalMs, Clock clock) {
        if (intervalMs <= 0) throw new IllegalArgumentException("interval must be positive: " + intervalMs);
        this.log = log;
        this.intervalNanos = TimeUnit.MILLISECONDS.toNanos(intervalMs);
        this.clock = clock;
    }

    /**
     * Logs {@code format} (SLF4J placeholders) at WARN unless a line passed less than an interval ago; returns whether
     * it was logged.
     */
    public boolean warn(String format, Object... args) {
        return log(ANY, format, args);
    }

    /** Logs {@code message} at WARN unless a line of {@code key} was logged less than an interval ago. */
    public boolean warnFor(String key, String message) {
        return log(key, "{}", new Object[] {message});
    }

    private boolean log(String key, String format, Object[] args) {
        Window w = windows.computeIfAbsent(key, k -> new Window());
        long suppressed;
        synchronized (w) {
            long now = clock.nanos();
            if (w.logged && now - w.lastNanos < intervalNanos) {
                w.suppressed++;
                return false;
            }
            w.logged = true;
            w.lastNanos = now;
            suppressed = w.suppressed;
            w.suppressed = 0;
        }
        if (suppressed > 0) {
            Object[] withCount = java.util.Arrays.copyOf(args, args.length + 1);
            withCount[args.length] = suppressed;
            log.warn(format + " ({} similar lines left out before this one)", withCount);
        } else {
            log.warn(format, args);
        }
        return true;
    }
}
