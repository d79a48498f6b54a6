package io.estuary.mr;

import org.apache.hadoop.io.DataInputBuffer;
import org.apache.hadoop.mapred.RawKeyValueIterator;
import org.apache.hadoop.util.Progress;

/**
 * The records [from, to) of a sorted {@link RecordBuffer} (one partition's run) as MapReduce's raw iterator, which
 * is what a combiner reads. Confined to the map task's thread.
 */
final class SortedRunIterator implements RawKeyValueIterator {
    private final RecordBuffer buffer;
    private final int to;
    private int current;
    private final DataInputBuffer key = new DataInputBuffer();
    private final DataInputBuffer value = new DataInputBuffer();
    private final Progress progress = new Progress();

    SortedRunIterator(RecordBuffer buffer, int from, int to) {
        this.buffer = buffer;
        this.to = to;
        this.current = from - 1;
    }

    @Override
    public DataInputBuffer getKey() {
        int ks = buffer.keyStart(current);
        key.reset(buffer.data(), ks, buffer.valueStart(current) - ks);
        return key;
    }

    @Override
    public DataInputBuffer getValue() {
        int vs = buffer.valueStart(current);
        value.reset(buffer.data(), vs, buffer.valueEnd(current) - vs);
        return value;
    }

    @Override
    public boolean next() {
        return ++current < to;
    }

    @Override
    public void close() {}

    @Override
    public Progress getProgress() {
        return progress;
    }
}
