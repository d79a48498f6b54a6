package io.estuary.common.util;

import io.estuary.common.time.Clock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * WARN lines that a peer can provoke at will (refused requests, failed handshakes), kept from flooding the log: at
 * most one line per key per interval; the next line logged for that key says how many were left out meanwhile. Keys
 * should come from a small fixed set (request types, statuses), never from what a peer sends, so the map stays
 * bounded. Thread-safe.
 */
public final class RateLimitedLog {
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

    public RateLimitedLog(Logger log, long intervalMs, Clock clock) {
        this.log = log;
        this.intervalNanos = TimeUnit.MILLISECONDS.toNanos(intervalMs);
        this.clock = clock;
    }

    /** Logs {@code message} at WARN unless a line of {@code key} was logged less than an interval ago. */
    public boolean warn(String key, String message) {
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
        if (suppressed > 0) log.warn("{} ({} similar lines left out)", message, suppressed);
        else log.warn(message);
        return true;
    }
}
