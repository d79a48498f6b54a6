package io.estuary.worker.push;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.testing.ManualClock;
import io.netty.channel.embedded.EmbeddedChannel;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * When a push connection counts as stalled: part of a frame held (or answers owed) with no frame completed for 30 s,
 * warned of once per stall; progress starts the wait again; a quiet connection that holds and owes nothing is idle,
 * not stalled. Timed by a manual clock.
 */
class StalledPushWatchTest {
    private final ManualClock clock = new ManualClock();
    private final EmbeddedChannel channel = new EmbeddedChannel();
    private final StalledPushWatch watch = new StalledPushWatch(channel, "watch-test", clock, false);

    @Test
    void aConnectionHoldingPartOfAFrameIsWarnedOfOncePerStall() {
        watch.received(100, 0); // part of a frame
        clock.advance(Duration.ofSeconds(29));
        assertFalse(watch.check(), "not yet 30 s");
        clock.advance(Duration.ofSeconds(2));
        assertTrue(watch.check(), "31 s holding part of a frame, no frame completed");
        clock.advance(Duration.ofSeconds(60));
        assertFalse(watch.check(), "once per stall");

        watch.received(0, 1); // the frame completed: progress
        watch.received(40, 1); // and the next one started
        clock.advance(Duration.ofSeconds(31));
        assertTrue(watch.check(), "a new stall is warned of again");
        channel.finishAndReleaseAll();
    }

    @Test
    void aQuietConnectionThatHoldsAndOwesNothingIsIdleNotStalled() {
        watch.received(0, 3);
        clock.advance(Duration.ofMinutes(5));
        assertFalse(watch.check());
        channel.finishAndReleaseAll();
    }

    @Test
    void moreBytesOfTheSameFrameAreProgress() {
        watch.received(100, 0);
        clock.advance(Duration.ofSeconds(25));
        watch.received(5000, 0); // more of the frame arrived
        clock.advance(Duration.ofSeconds(25));
        assertFalse(watch.check(), "25 s since the last bytes");
        clock.advance(Duration.ofSeconds(10));
        assertTrue(watch.check());
        channel.finishAndReleaseAll();
    }
}
