package io.estuary.mr;

import java.io.OutputStream;
import java.util.Arrays;
import org.apache.hadoop.io.RawComparator;
import org.apache.hadoop.util.IndexedSortable;
import org.apache.hadoop.util.QuickSort;

/**
 * A map task's serialized records between two spills: the bytes of every key and value, and per record its
 * partition and where its key and value lie. It sorts by partition, then by key with the job's raw comparator.
 * Its arrays grow as records come, up to about the collector's memory bound ({@link #usedBytes} counts both),
 * except that a single record larger than the bound still fits. Confined to the map task's thread.
 */
final class RecordBuffer implements IndexedSortable {
    /** Ints of metadata per record: partition, key start, value start, value end. */
    private static final int META = 4;

    private final RawComparator<?> comparator;
    private final int limit;
    private byte[] data;
    private int length;
    private int[] meta;
    private int count;

    private final OutputStream stream = new OutputStream() {
        @Override
        public void write(int b) {
            ensure(1);
            data[length++] = (byte) b;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            ensure(len);
            System.arraycopy(b, off, data, length, len);
            length += len;
        }
    };

    RecordBuffer(RawComparator<?> comparator, int limit) {
        this.comparator = comparator;
        this.limit = limit;
        this.data = new byte[Math.min(limit, 1 << 16)];
        this.meta = new int[META * 1024];
    }

    /** Where serializers write a record's key, then its value. */
    OutputStream stream() {
        return stream;
    }

    int position() {
        return length;
    }

    /** Records the record whose key starts at {@code keyStart} and value at {@code valueStart}, ending here. */
    void add(int partition, int keyStart, int valueStart) {
        if (count * META == meta.length) meta = Arrays.copyOf(meta, meta.length * 2);
        int m = count * META;
        meta[m] = partition;
        meta[m + 1] = keyStart;
        meta[m + 2] = valueStart;
        meta[m + 3] = length;
        count++;
    }

    /** The bytes held: serialized records plus 16 bytes of metadata per record. */
    long usedBytes() {
        return length + 16L * count;
    }

    int count() {
        return count;
    }

    void sort() {
        new QuickSort().sort(this, 0, count);
    }

    void reset() {
        length = 0;
        count = 0;
    }

    byte[] data() {
        return data;
    }

    int partition(int i) {
        return meta[i * META];
    }

    int keyStart(int i) {
        return meta[i * META + 1];
    }

    int valueStart(int i) {
        return meta[i * META + 2];
    }

    int valueEnd(int i) {
        return meta[i * META + 3];
    }

    @Override
    public int compare(int i, int j) {
        int a = i * META;
        int b = j * META;
        if (meta[a] != meta[b]) return Integer.compare(meta[a], meta[b]);
        return comparator.compare(
                data, meta[a + 1], meta[a + 2] - meta[a + 1], data, meta[b + 1], meta[b + 2] - meta[b + 1]);
    }

    @Override
    public void swap(int i, int j) {
        int a = i * META;
        int b = j * META;
        for (int k = 0; k < META; k++) {
            int t = meta[a + k];
            meta[a + k] = meta[b + k];
            meta[b + k] = t;
        }
    }

    private void ensure(int extra) {
        int need = length + extra;
        if (need < 0) throw new IllegalStateException("a map task's sort buffer cannot hold more than 2 GB");
        if (need <= data.length) return;
        int grown = (int) Math.min(Math.max(need, Math.min((long) limit, data.length * 2L)), Integer.MAX_VALUE - 8);
        data = Arrays.copyOf(data, Math.max(grown, need));
    }
}
