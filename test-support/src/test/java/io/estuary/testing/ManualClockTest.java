package io.estuary.testing;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ManualClockTest {
    @Test
    void movesOnlyWhenAdvanced() {
        ManualClock c = new ManualClock(5_000);
        long n0 = c.nanos();
        assertEquals(5_000, c.millis());
        assertEquals(5_000, c.millis(), "reading does not move it");
        c.advance(Duration.ofMillis(1_500));
        assertEquals(6_500, c.millis());
        assertEquals(1_500_000_000L, c.nanos() - n0);
    }

    @Test
    void wallClockCanBeSetWithoutMovingMonotonicTime() {
        ManualClock c = new ManualClock();
        long n0 = c.nanos();
        c.setMillis(42);
        assertEquals(42, c.millis());
        assertEquals(n0, c.nanos());
    }

    @Test
    void refusesToGoBack() {
        assertThrows(IllegalArgumentException.class, () -> new ManualClock().advance(Duration.ofMillis(-1)));
    }

    @Test
    void concurrentAdvancesAllCount() throws InterruptedException {
        ManualClock c = new ManualClock(0);
        Thread[] ts = new Thread[4];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = new Thread(() -> {
                for (int k = 0; k < 10_000; k++) c.advanceMillis(1);
            });
            ts[i].start();
        }
        for (Thread t : ts) t.join();
        assertEquals(40_000, c.millis());
    }
}
