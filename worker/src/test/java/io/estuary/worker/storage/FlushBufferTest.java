package io.estuary.worker.storage;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.testing.ManualClock;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The flush buffer's memory accounting and age, on every way out (take, drop). */
class FlushBufferTest {
    private final MemoryTracker memory = new MemoryTracker(64 << 20);
    private final ManualClock clock = new ManualClock();
    private final FlushBuffer buffer = new FlushBuffer("test partition", memory, 64 << 10, clock);

    @AfterEach
    void nothingHeld() {
        buffer.drop();
        assertEquals(0, memory.held(), "memory still counted as held");
    }

    private void append(int n) {
        ByteBuf data = Unpooled.wrappedBuffer(new byte[n]);
        buffer.reserve(n);
        buffer.write(data);
        assertEquals(0, data.readableBytes(), "the push was copied whole");
    }

    @Test
    void theMemoryTrackerCountsTheCapacityAsTheBufferGrows() {
        assertEquals(0, buffer.readable());
        assertEquals(0, buffer.counted());
        append(100);
        int first = buffer.counted();
        assertTrue(first >= 100 && first <= 16 << 10, "starts small: " + first);
        assertEquals(first, memory.held());
        append(40 << 10);
        assertTrue(buffer.counted() > first, "grew: " + buffer.counted());
        assertEquals(buffer.counted(), memory.held());
        assertEquals(100 + (40 << 10), buffer.readable());
        assertFalse(buffer.full());
        append(30 << 10);
        assertTrue(buffer.full(), "a flush buffer's worth");
    }

    @Test
    void aPartitionThatFilledABufferGetsFullSizedBuffersSoNoByteIsCopiedTwice() {
        append(1000);
        assertFalse(buffer.wouldOverflow(63 << 10), "fits: 1000 + 63 KiB <= 64 KiB");
        assertTrue(buffer.wouldOverflow(64 << 10), "would pass the threshold: goes first to the flusher");
        append(63 << 10);
        int grown = buffer.counted();
        ByteBuf taken = buffer.take(true);
        taken.release();
        memory.release(grown);
        append(100);
        assertEquals(64 << 10, buffer.counted(), "the next buffer starts at the threshold: it will fill");
        assertEquals(64 << 10, memory.held(), "and is counted whole");
        append((64 << 10) - 100);
        assertEquals(64 << 10, buffer.counted(), "filled without growing");
        assertTrue(buffer.full());
        assertFalse(buffer.wouldOverflow(0));
    }

    @Test
    void buffersTakenEarlyDoNotMakeAPartitionLarge() {
        append(60 << 10);
        int counted = buffer.counted();
        buffer.take(false).release(); // flushed early (memory pressure, age): says nothing of the partition
        memory.release(counted);
        append(100);
        assertTrue(buffer.counted() <= 16 << 10, "starts small again: " + buffer.counted());
        // Filled once, then a filled take that held little (a single huge push after it): small again.
        append((64 << 10) - 100);
        counted = buffer.counted();
        buffer.take(true).release();
        memory.release(counted);
        append(10);
        assertEquals(64 << 10, buffer.counted());
        counted = buffer.counted();
        buffer.take(true).release(); // held 10 bytes
        memory.release(counted);
        append(10);
        assertTrue(buffer.counted() <= 16 << 10, "small again: " + buffer.counted());
    }

    @Test
    void theOldestByteDatesTheBufferUntilItIsHandedOver() {
        assertEquals(0, buffer.sinceNanos(), "nothing buffered");
        clock.advanceMillis(5);
        long start = clock.nanos();
        append(10);
        clock.advanceMillis(7);
        append(10);
        assertEquals(start, buffer.sinceNanos(), "dated by its first byte, not its last");
        int counted = buffer.counted();
        ByteBuf taken = buffer.take();
        try {
            assertEquals(20, taken.readableBytes());
            assertEquals(0, buffer.readable());
            assertEquals(0, buffer.counted());
            assertEquals(0, buffer.sinceNanos());
            assertEquals(counted, memory.held(), "the taker carries the memory until its write is done");
        } finally {
            taken.release();
            memory.release(counted);
        }
        clock.advanceMillis(3);
        append(10);
        assertEquals(clock.nanos(), buffer.sinceNanos(), "a new buffer, dated anew");
    }

    @Test
    void dropReleasesTheBufferAndItsMemoryAndSaysWhatWasLost() {
        assertEquals(0, buffer.drop(), "nothing to drop");
        assertNull(buffer.take(), "nothing to take");
        append(1000);
        assertEquals(1000, buffer.drop());
        assertEquals(0, memory.held());
        assertEquals(0, buffer.readable());
    }
}
