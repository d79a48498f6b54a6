package io.estuary.mr;

import io.estuary.client.write.MapOutputWriter;
import java.io.IOException;
import org.apache.hadoop.io.DataOutputBuffer;
import org.apache.hadoop.io.WritableUtils;

/**
 * Frames a partition's sorted records as MapReduce's IFile records (key length, value length, key, value) and
 * pushes them in batches of about the push buffer size. Each batch holds a contiguous run of one spill's sorted
 * records, so every batch is sorted by itself: the reducer merges batches, whatever order they arrive in.
 * Confined to the map task's thread.
 */
final class SegmentPusher {
    private final MapOutputWriter out;
    private final int batchSize;
    private final DataOutputBuffer batch = new DataOutputBuffer();
    private int partition = -1;
    private int records;
    private long pushedRecords;

    SegmentPusher(MapOutputWriter out, int batchSize) {
        this.out = out;
        this.batchSize = batchSize;
    }

    /** Starts the sorted run of {@code p}; the previous run is pushed first. */
    void start(int p) {
        end();
        partition = p;
    }

    void append(byte[] b, int keyStart, int keyLength, int valueStart, int valueLength) throws IOException {
        WritableUtils.writeVInt(batch, keyLength);
        WritableUtils.writeVInt(batch, valueLength);
        batch.write(b, keyStart, keyLength);
        batch.write(b, valueStart, valueLength);
        records++;
        if (batch.getLength() >= batchSize) pushBatch();
    }

    /** Ends the current run: what is buffered goes out as a batch of its own. */
    void end() {
        pushBatch();
    }

    long pushedRecords() {
        return pushedRecords;
    }

    private void pushBatch() {
        if (records == 0) return;
        out.writeBatch(partition, batch.getData(), 0, batch.getLength(), records);
        pushedRecords += records;
        records = 0;
        batch.reset();
    }
}
