package io.estuary.worker.storage;

import io.estuary.common.util.BatchLayout;
import io.netty.buffer.ByteBuf;
import java.util.Arrays;

/**
 * Which maps' batches lie where in a committed partition file, so that a map-range read (Spark's local shuffle
 * reader, a skew split) is served only the parts of the file that may hold those maps, not the whole partition.
 *
 * <p>The file is cut into regions at push boundaries: a region closes once it holds {@code granularity} bytes, and
 * at every chunk start. Each region keeps the smallest and largest map id among its batches (read from the batch
 * headers as pushes arrive). Engines run map tasks roughly in index order, so regions cover narrow map ranges and a
 * read of a quarter of the maps fetches about a quarter of the file plus at most a region at each edge. Memory: 16
 * bytes per region, about {@code 16 / granularity} of the file's size.
 *
 * <p>Immutable once built; built by a {@link Builder} under the writer's lock.
 */
public final class MapIndex {
    private final long[] starts;
    private final int[] minMaps;
    private final int[] maxMaps;
    private final long length;

    private MapIndex(long[] starts, int[] minMaps, int[] maxMaps, long length) {
        this.starts = starts;
        this.minMaps = minMaps;
        this.maxMaps = maxMaps;
        this.length = length;
    }

    public int regions() {
        return starts.length;
    }

    /**
     * The ranges that may hold batches of maps [startMap, endMap): adjacent selected regions are merged into one
     * range, except across a chunk start, so no range is longer than a chunk (unless one push alone was).
     */
    FileSegments select(int startMap, int endMap, long[] chunkOffsets) {
        long[] offsets = new long[starts.length];
        long[] lengths = new long[starts.length];
        int n = 0;
        int chunk = 0;
        for (int i = 0; i < starts.length; i++) {
            long start = starts[i];
            long end = i + 1 < starts.length ? starts[i + 1] : length;
            while (chunk < chunkOffsets.length && chunkOffsets[chunk] < start) chunk++;
            boolean chunkStart = chunk < chunkOffsets.length && chunkOffsets[chunk] == start;
            if (minMaps[i] >= endMap || maxMaps[i] < startMap) continue;
            if (n > 0 && offsets[n - 1] + lengths[n - 1] == start && !chunkStart) {
                lengths[n - 1] += end - start;
            } else {
                offsets[n] = start;
                lengths[n] = end - start;
                n++;
            }
        }
        return new FileSegments(Arrays.copyOf(offsets, n), Arrays.copyOf(lengths, n));
    }

    /**
     * Collects regions as pushes are appended. A push that does not parse as whole batches (never from a real client)
     * leaves the file without an index: map-range reads of it are then served the whole file. Not thread-safe: the
     * writer calls it under its lock.
     */
    static final class Builder {
        private final long granularity;
        private long[] starts = new long[4];
        private int[] minMaps = new int[4];
        private int[] maxMaps = new int[4];
        private int count;
        private boolean broken;

        Builder(long granularity) {
            this.granularity = granularity;
        }

        /** Indexes the batches of {@code push}, which will lie at {@code offset} in the file. */
        void add(long offset, ByteBuf push, boolean chunkStart) {
            if (broken) return;
            int min = Integer.MAX_VALUE;
            int max = Integer.MIN_VALUE;
            int pos = push.readerIndex();
            int end = push.writerIndex();
            while (pos < end) {
                if (end - pos < BatchLayout.HEADER_SIZE) {
                    drop();
                    return;
                }
                int map = push.getInt(pos + BatchLayout.MAP_ID);
                int dataLength = push.getInt(pos + BatchLayout.DATA_LENGTH);
                if (map < 0 || dataLength < 0 || dataLength > end - pos - BatchLayout.HEADER_SIZE) {
                    drop();
                    return;
                }
                min = Math.min(min, map);
                max = Math.max(max, map);
                pos += BatchLayout.HEADER_SIZE + dataLength;
            }
            if (min > max) return; // nothing in it
            if (count == 0 || chunkStart || offset - starts[count - 1] >= granularity) {
                if (count == starts.length) {
                    starts = Arrays.copyOf(starts, count * 2);
                    minMaps = Arrays.copyOf(minMaps, count * 2);
                    maxMaps = Arrays.copyOf(maxMaps, count * 2);
                }
                starts[count] = offset;
                minMaps[count] = min;
                maxMaps[count] = max;
                count++;
            } else {
                minMaps[count - 1] = Math.min(minMaps[count - 1], min);
                maxMaps[count - 1] = Math.max(maxMaps[count - 1], max);
            }
        }

        private void drop() {
            broken = true;
            starts = null;
            minMaps = null;
            maxMaps = null;
        }

        /** The index of a file of {@code length} bytes, or null when it could not be built. */
        MapIndex build(long length) {
            if (broken) return null;
            return new MapIndex(
                    Arrays.copyOf(starts, count), Arrays.copyOf(minMaps, count), Arrays.copyOf(maxMaps, count), length);
        }
    }
}
