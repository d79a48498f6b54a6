package io.estuary.testing;

import io.estuary.common.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link Clock} that moves only when the test says so, so time-based behaviour (liveness expiry, idle streams,
 * stall detection) is driven instead of waited for. Wall and monotonic time move together: {@link #advance}
 * adds the same duration to both.
 *
 * <p>Thread-safe: the components under test read it from their own threads while the test advances it.
 */
public final class ManualClock implements Clock {
    private final AtomicLong millis;
    private final AtomicLong nanos;

    /** Starts at an arbitrary fixed instant (2026-01-01T00:00:00Z) and at a non-zero monotonic origin. */
    public ManualClock() {
        this(1_767_225_600_000L);
    }

    public ManualClock(long epochMillis) {
        this.millis = new AtomicLong(epochMillis);
        // Not 0: code may use 0 as "never happened".
        this.nanos = new AtomicLong(1_000_000_000L);
    }

    @Override
    public long millis() {
        return millis.get();
    }

    @Override
    public long nanos() {
        return nanos.get();
    }

    /** Moves both clocks forward by {@code d} (not negative: a monotonic clock does not go back). */
    public ManualClock advance(Duration d) {
        if (d.isNegative()) throw new IllegalArgumentException("time does not go back: " + d);
        millis.addAndGet(d.toMillis());
        nanos.addAndGet(d.toNanos());
        return this;
    }

    public ManualClock advanceMillis(long ms) {
        return advance(Duration.ofMillis(ms));
    }

    /** Sets the wall clock (e.g. a skewed or stepped system clock); the monotonic clock does not move. */
    public ManualClock setMillis(long epochMillis) {
        millis.set(epochMillis);
        return this;
    }
}
