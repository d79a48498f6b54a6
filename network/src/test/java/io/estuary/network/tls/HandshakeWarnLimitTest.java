package io.estuary.network.tls;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.testing.ManualClock;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The failed-handshake warning limit, driven by a manual clock. */
class HandshakeWarnLimitTest {
    @Test
    void oneLineAnIntervalAndTheNextSaysHowManyWereLeftOut() {
        ManualClock clock = new ManualClock();
        HandshakeWarnLimit limit = new HandshakeWarnLimit(TimeUnit.SECONDS.toNanos(1), clock);

        assertEquals(0, limit.tryLog(), "the first failure is logged");
        assertEquals(-1, limit.tryLog());
        clock.advanceMillis(999);
        assertEquals(-1, limit.tryLog(), "still within the interval");
        clock.advanceMillis(1);
        assertEquals(2, limit.tryLog(), "a whole interval later: logged, with the two left out");
        assertEquals(-1, limit.tryLog());
        clock.advanceMillis(5_000);
        assertEquals(1, limit.tryLog());
        clock.advanceMillis(1_000);
        assertEquals(0, limit.tryLog(), "nothing left out since the last line");
    }
}
