package io.estuary.client.retry;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

/** The back-off's waits grow, stay jittered within bounds, end with the budget, and start over after a reset. */
class UnreachableBackoffTest {
    @Test
    void waitsDoubleWithinBoundsAndStopAtTheBudget() {
        UnreachableBackoff b = new UnreachableBackoff(20_000);
        long now = 1_000_000;
        long full = UnreachableBackoff.FIRST_WAIT_MS;
        long total = 0;
        int tries = 0;
        long w;
        while ((w = b.nextWait(now)) >= 0) {
            long left = 1_000_000 + 20_000 - now;
            assertTrue(
                    w >= Math.min(full / 2, left) && w <= Math.min(full, left), "wait " + w + " for a step of " + full);
            full = Math.min(UnreachableBackoff.MAX_WAIT_MS, full * 2);
            now += w;
            total += w;
            assertTrue(++tries < 100, "the budget must end the waits");
        }
        assertEquals(20_000, total, "the last try falls at the end of the budget");
        b.reset();
        long again = b.nextWait(now);
        assertTrue(again >= UnreachableBackoff.FIRST_WAIT_MS / 2 && again <= UnreachableBackoff.FIRST_WAIT_MS);
    }

    @Test
    void aZeroBudgetNeverWaits() {
        assertEquals(-1, new UnreachableBackoff(0).nextWait(5));
    }
}
