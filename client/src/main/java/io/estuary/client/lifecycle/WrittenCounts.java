package io.estuary.client.lifecycle;

import io.estuary.common.protocol.PartitionFiles;
import io.estuary.common.protocol.PartitionStats;
import java.util.Arrays;
import java.util.List;

/**
 * What the winning attempts of a shuffle's maps wrote, kept small enough for any shuffle the driver can run.
 *
 * <p>Readers compare what they read with this. A reader of every map needs, per partition, the batches, records and
 * checksum over all maps: these are summed as each map ends (three longs per partition). A reader of a map range
 * (Spark's adaptive skew split and local reader) needs them per map: only the batch count of each map and partition
 * is kept for that, varint-coded per map (about two bytes per map and partition it wrote to, against about 60 for
 * the statistics as objects: a 10,000 x 10,000 shuffle needs about 200 MB instead of about 6 GB). Such a reader
 * compares batches only; records and checksums add little there, because a batch is identified by map, attempt and
 * batch id, and its records and bytes are covered by its own CRC.
 *
 * <p>Not thread-safe: {@link ShuffleState} calls it under its own lock.
 */
final class WrittenCounts {
    private final int numPartitions;
    /** Per partition, over the maps that ended. */
    private final long[] batches;

    private final long[] records;
    private final long[] checksums;
    /** Per map, its batch count per partition: varint pairs (partitions skipped since the last one, batches). */
    private final byte[][] mapBatches;

    WrittenCounts(int numMappers, int numPartitions) {
        this.numPartitions = numPartitions;
        this.batches = new long[numPartitions];
        this.records = new long[numPartitions];
        this.checksums = new long[numPartitions];
        this.mapBatches = new byte[numMappers][];
    }

    /**
     * Adds what map {@code mapId}'s winning attempt wrote (partition ids already checked to be in range, each counts
     * non-negative). A partition listed twice counts the sum of its entries.
     */
    void add(int mapId, List<PartitionStats> stats) {
        // (partition, batches) packed in a long sorts by partition; the request's order is not trusted.
        long[] packed = new long[stats.size()];
        for (int i = 0; i < packed.length; i++) {
            PartitionStats s = stats.get(i);
            int p = s.getPartitionId();
            batches[p] += s.getBatches();
            records[p] += s.getRecords();
            checksums[p] += s.getChecksum();
            packed[i] = ((long) p << 32) | (s.getBatches() & 0xffffffffL);
        }
        Arrays.sort(packed);
        byte[] out = new byte[packed.length * 2 + 16];
        int len = 0;
        int previous = -1;
        for (int i = 0; i < packed.length; ) {
            int p = (int) (packed[i] >>> 32);
            long n = 0;
            for (; i < packed.length && (int) (packed[i] >>> 32) == p; i++) n += packed[i] & 0xffffffffL;
            if (n == 0) continue; // nothing to check where nothing was written
            if (out.length - len < 20) out = Arrays.copyOf(out, out.length * 2);
            len = putVarint(out, len, p - previous - 1);
            len = putVarint(out, len, n);
            previous = p;
        }
        mapBatches[mapId] = Arrays.copyOf(out, len);
    }

    /** Sets on {@code files} (partitions [start, start + files.length)) what every map wrote to each. */
    void setTotals(PartitionFiles.Builder[] files, int start) {
        for (int i = 0; i < files.length; i++) {
            int p = start + i;
            files[i].setExpectedBatches(batches[p])
                    .setExpectedRecords(records[p])
                    .setExpectedChecksum(checksums[p]);
        }
    }

    /** Sets on {@code files} (partitions [start, start + files.length)) the batches maps [startMap, endMap) wrote. */
    void setBatches(PartitionFiles.Builder[] files, int start, int startMap, int endMap) {
        long[] sum = new long[files.length];
        int end = start + files.length;
        for (int m = Math.max(0, startMap); m < Math.min(endMap, mapBatches.length); m++) {
            byte[] in = mapBatches[m];
            if (in == null) continue;
            int p = -1;
            int[] pos = {0};
            while (pos[0] < in.length) {
                p += (int) getVarint(in, pos) + 1;
                long n = getVarint(in, pos);
                if (p >= end) break; // pairs come in partition order
                if (p >= start) sum[p - start] += n;
            }
        }
        for (int i = 0; i < files.length; i++) {
            files[i].setExpectedBatches(sum[i]).clearExpectedRecords().clearExpectedChecksum();
        }
    }

    /**
     * Bytes these counts hold on the heap, arrays and their headers included (a 16-byte header and 8-byte reference
     * per array, as a 64-bit JVM lays them out; with compressed references they are smaller).
     */
    long retainedBytes() {
        long bytes = 3 * (16 + 8L * numPartitions) + 16 + 8L * mapBatches.length;
        for (byte[] b : mapBatches) {
            if (b != null) bytes += 16 + b.length;
        }
        return bytes;
    }

    private static int putVarint(byte[] out, int at, long v) {
        while ((v & ~0x7fL) != 0) {
            out[at++] = (byte) ((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        out[at++] = (byte) v;
        return at;
    }

    private static long getVarint(byte[] in, int[] pos) {
        long v = 0;
        for (int shift = 0; ; shift += 7) {
            byte b = in[pos[0]++];
            v |= (long) (b & 0x7f) << shift;
            if (b >= 0) return v;
        }
    }
}
