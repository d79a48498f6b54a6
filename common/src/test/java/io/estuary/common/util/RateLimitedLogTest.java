package io.estuary.common.util;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.common.time.Clock;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** {@link RateLimitedLog}: one line per key per interval, by the injected clock. */
class RateLimitedLogTest {
    private long nanos;

    private final Clock clock = new Clock() {
        @Override
        public long millis() {
            return TimeUnit.NANOSECONDS.toMillis(nanos);
        }

        @Override
        public long nanos() {
            return nanos;
        }
    };

    @Test
    void logsOneLinePerKeyPerInterval() {
        RateLimitedLog log = new RateLimitedLog(LoggerFactory.getLogger(RateLimitedLogTest.class), 1_000, clock);
        assertTrue(log.warnFor("a", "first a"));
        assertFalse(log.warnFor("a", "second a, left out"));
        assertTrue(log.warnFor("b", "another key has its own interval"));
        nanos += TimeUnit.MILLISECONDS.toNanos(999);
        assertFalse(log.warnFor("a", "still within the interval"));
        nanos += TimeUnit.MILLISECONDS.toNanos(1);
        assertTrue(log.warnFor("a", "a again, saying two were left out"));
        assertFalse(log.warnFor("a", "left out again"));
    }
}
