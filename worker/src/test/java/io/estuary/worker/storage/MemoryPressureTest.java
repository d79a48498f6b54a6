package io.estuary.worker.storage;

import static io.estuary.worker.storage.MemoryPressure.*;
import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

class MemoryPressureTest {
    // limit 1000: resume below 700, pause pushes at 850, pause all at 950
    private final MemoryPressure.Watermarks w = new MemoryPressure.Watermarks(1000, 0.7, 0.85, 0.95);

    @Test
    void everyTransition() {
        assertEquals(NORMAL, NORMAL.next(849, w));
        assertEquals(PAUSE_PUSH, NORMAL.next(850, w));
        assertEquals(PAUSE_ALL, NORMAL.next(950, w));
        // Hysteresis: a paused worker stays paused until below the resume mark.
        assertEquals(PAUSE_PUSH, PAUSE_PUSH.next(849, w));
        assertEquals(PAUSE_PUSH, PAUSE_PUSH.next(700, w));
        assertEquals(NORMAL, PAUSE_PUSH.next(699, w));
        assertEquals(PAUSE_ALL, PAUSE_PUSH.next(950, w));
        // Replication resumes first, once below the push mark; everything resumes below the resume mark.
        assertEquals(PAUSE_ALL, PAUSE_ALL.next(850, w));
        assertEquals(PAUSE_PUSH, PAUSE_ALL.next(849, w));
        assertEquals(NORMAL, PAUSE_ALL.next(0, w));
        assertEquals(NORMAL, NORMAL.next(-1, w)); // never stuck, even on a miscount
    }

    @Test
    void whatEachLevelReads() {
        assertTrue(NORMAL.reads(false));
        assertTrue(NORMAL.reads(true));
        assertFalse(PAUSE_PUSH.reads(false));
        assertTrue(PAUSE_PUSH.reads(true));
        assertFalse(PAUSE_ALL.reads(false));
        assertFalse(PAUSE_ALL.reads(true));
    }

    @Test
    void watermarksMustBeOrdered() {
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class, () -> new MemoryPressure.Watermarks(1000, 0.9, 0.85, 0.95));
        assertTrue(e.getMessage().contains("resume (0.9) < pause push (0.85)"), e.getMessage());
    }

    @Test
    void limitFollowsTheJvmsDirectMemory() {
        assertEquals(1L << 30, MemoryTracker.effectiveLimit(1L << 30, 8L << 30));
        assertEquals(80L << 20, MemoryTracker.effectiveLimit(1L << 30, 160L << 20));
        assertEquals(64L << 20, MemoryTracker.effectiveLimit(64L << 20, -1));
    }
}
