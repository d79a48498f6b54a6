package io.estuary.client.read;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * The reader's record of returned batches: exact membership, and its footprint per batch, measured two ways: the
 * bytes it holds once filled, and the bytes allocated (on this thread) while filling it, which also counts every
 * table outgrown on the way. The ids are spread as one partition's reader sees them (each map numbers its batches
 * over all partitions, so one partition's ids of a map are far apart).
 */
class SeenBatchesTest {
    private static final int MAPS = 1000;
    private static final int BATCHES_PER_MAP = 1000;
    /** The stride of one partition's batch ids within a map (the map wrote to that many partitions). */
    private static final int STRIDE = 997;

    @Test
    void membershipIsExactAcrossGrowthAndBatchesAreReadOnce() {
        SeenBatches seen = new SeenBatches();
        java.util.HashSet<Long> reference = new java.util.HashSet<>();
        java.util.Random random = new java.util.Random(7);
        for (int i = 0; i < 200_000; i++) {
            int map = random.nextInt(3000);
            int batch = random.nextInt(50_000) - 10; // negative batch ids are only bits: they must work too
            boolean isNew = reference.add(((long) map << 32) | (batch & 0xffffffffL));
            assertEquals(!isNew, seen.contains(map, batch));
            assertEquals(isNew, seen.add(map, batch));
            assertTrue(seen.contains(map, batch));
        }
        assertEquals(reference.size(), seen.size());
        assertEquals(!reference.contains(0L), seen.add(0, 0), "key 0 is a batch like any other");
        assertTrue(seen.contains(0, 0));
        assertFalse(seen.contains(Integer.MAX_VALUE, -1));
        assertTrue(seen.add(Integer.MAX_VALUE, -1), "the largest key");
        assertTrue(seen.contains(Integer.MAX_VALUE, -1));
        assertThrows(IllegalArgumentException.class, () -> seen.add(-1, 0));
    }

    @Test
    void aMillionBatchesCostAboutSixteenBytesEachNotSeventy() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getThreadAllocatedBytes(Thread.currentThread().getId());
        SeenBatches seen = new SeenBatches();
        for (int m = 0; m < MAPS; m++) {
            for (int b = 0; b < BATCHES_PER_MAP; b++) seen.add(m, 17 + b * STRIDE);
        }
        long allocated = threads.getThreadAllocatedBytes(Thread.currentThread().getId()) - before;
        long n = (long) MAPS * BATCHES_PER_MAP;
        assertEquals(n, seen.size());
        double held = (double) seen.footprintBytes() / n;
        double allocatedPerBatch = (double) allocated / n;
        System.out.printf(
                "SEEN BATCHES: %d batches hold %.1f bytes each; %.1f bytes each allocated while filling%n",
                n, held, allocatedPerBatch);
        // A table at most three quarters full holds 8 / 0.75 = 10.7 to 21.3 bytes per batch (16.8 at a million).
        assertTrue(held <= 22, "held " + held + " bytes per batch");
        // Filling also allocates every outgrown table: at most twice the final one. A HashSet<Long> allocates about
        // 60 bytes per batch (a Long, a node, and its tables).
        assertTrue(allocatedPerBatch <= 40, "allocated " + allocatedPerBatch + " bytes per batch");
    }
}
