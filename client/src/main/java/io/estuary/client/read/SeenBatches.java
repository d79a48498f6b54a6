package io.estuary.client.read;

/**
 * The batches a reader has returned, by map and batch id, so that a batch seen twice (a retried push that had
 * landed, or an epoch read again from another copy) is returned once. A reader sees up to millions of batches, so
 * this is an open-addressing hash set of primitive longs: 8 bytes a slot, at most three quarters full, so between
 * about 11 and 22 bytes per batch (a {@code HashSet<Long>} costs about 70). Batch ids of one map are not dense in
 * one partition (a map numbers its batches across all partitions), which rules out a bitset per map.
 *
 * <p>Not thread-safe: confined to its reader's thread.
 */
final class SeenBatches {
    private static final int MIN_CAPACITY = 64;
    /** Fibonacci hashing: spreads the (map, batch) pairs, whose low bits are sequential, over the table. */
    private static final long MIX = 0x9E3779B97F4A7C15L;

    /** Each slot holds key + 1; 0 marks a free slot (no key is -1: map ids are never negative). */
    private long[] slots = new long[MIN_CAPACITY];

    private int shift = 64 - Integer.numberOfTrailingZeros(MIN_CAPACITY);
    private int size;

    private static long key(int mapId, int batchId) {
        return ((long) mapId << 32) | (batchId & 0xffffffffL);
    }

    /** Whether the batch was added before. */
    boolean contains(int mapId, int batchId) {
        long stored = key(mapId, batchId) + 1;
        int mask = slots.length - 1;
        for (int i = (int) ((stored * MIX) >>> shift); ; i = (i + 1) & mask) {
            long s = slots[i];
            if (s == stored) return true;
            if (s == 0) return false;
        }
    }

    /** Adds the batch; returns false when it was there already. */
    boolean add(int mapId, int batchId) {
        if (mapId < 0) throw new IllegalArgumentException("negative map id " + mapId);
        if ((size + 1) * 4L > slots.length * 3L) grow();
        return insert(slots, shift, key(mapId, batchId) + 1);
    }

    private boolean insert(long[] table, int tableShift, long stored) {
        int mask = table.length - 1;
        for (int i = (int) ((stored * MIX) >>> tableShift); ; i = (i + 1) & mask) {
            long s = table[i];
            if (s == stored) return false;
            if (s == 0) {
                table[i] = stored;
                if (table == slots) size++;
                return true;
            }
        }
    }

    private void grow() {
        long[] bigger = new long[slots.length * 2];
        int biggerShift = shift - 1;
        for (long s : slots) {
            if (s != 0) insert(bigger, biggerShift, s);
        }
        slots = bigger;
        shift = biggerShift;
    }

    int size() {
        return size;
    }

    /** Heap bytes this set holds: its table and its own fields. */
    long footprintBytes() {
        return 16L + 8L * slots.length + 32;
    }
}
