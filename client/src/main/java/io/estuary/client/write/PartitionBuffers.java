package io.estuary.client.write;

import io.netty.buffer.ByteBuf;

/**
 * One map attempt's serialized records not yet in a batch, one growable buffer per partition, and the bytes those
 * buffers hold (their capacity: what is really allocated). A buffer grows by doubling up to the buffer size, with a
 * quarter more room for the record that fills it (records streamed in, {@link #appendBytes}, are only known to fill
 * the buffer once written), or to one record when a record is bigger; it is kept for the partition's next batch,
 * unless a huge record grew it past that. The buffers are heap arrays, so nothing here needs releasing; the batch
 * {@link #take} encodes belongs to the caller, whose push then owns it. Confined to the task's thread.
 */
final class PartitionBuffers {
    private final int bufferSize;
    private final byte[][] buffers;
    private final int[] fill;
    private final int[] records;
    private long heldBytes;

    /** The most a buffer keeps between batches: the buffer size and room for the record that fills it. */
    private final int keptSize;

    PartitionBuffers(int numPartitions, int bufferSize) {
        this.bufferSize = bufferSize;
        this.keptSize = bufferSize + bufferSize / 4;
        this.buffers = new byte[numPartitions][];
        this.fill = new int[numPartitions];
        this.records = new int[numPartitions];
    }

    /** Whether {@code length} more bytes would overflow a partition that already holds some. */
    boolean wouldOverflow(int partition, int length) {
        return fill[partition] > 0 && fill[partition] + length > bufferSize;
    }

    boolean isEmpty(int partition) {
        return fill[partition] == 0;
    }

    /** Bytes buffered per partition (read-only for the caller). */
    int[] fill() {
        return fill;
    }

    /** Appends {@code count} whole records; returns whether the partition's buffer is now full. */
    boolean append(int partition, byte[] data, int offset, int length, int count) {
        appendBytes(partition, data, offset, length);
        return endRecords(partition, count);
    }

    /** Appends bytes of records not yet whole; {@link #endRecords} counts them once they are. */
    void appendBytes(int partition, byte[] data, int offset, int length) {
        byte[] buf = buffers[partition];
        int need = fill[partition] + length;
        if (buf == null || buf.length < need) {
            // Doubling past the buffer size too: a huge record streams in, in pieces, and must not be copied again
            // for each piece.
            int doubled = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(1024L, buf == null ? 0 : 2L * buf.length));
            int cap = need <= bufferSize
                    ? Math.min(bufferSize, Math.max(need, doubled))
                    : Math.max(need, Math.max(keptSize, doubled));
            byte[] grown = new byte[cap];
            if (buf != null) System.arraycopy(buf, 0, grown, 0, fill[partition]);
            heldBytes += cap - (buf == null ? 0 : buf.length);
            buffers[partition] = buf = grown;
        }
        System.arraycopy(data, offset, buf, fill[partition], length);
        fill[partition] = need;
    }

    /** Counts {@code count} records whose bytes are appended; returns whether the partition's buffer is now full. */
    boolean endRecords(int partition, int count) {
        records[partition] += count;
        return fill[partition] >= bufferSize;
    }

    /** Encodes what the partition holds as one batch and empties it. */
    ByteBuf take(int partition, WrittenBatches encoder) {
        ByteBuf batch = encoder.encode(partition, buffers[partition], 0, fill[partition], records[partition]);
        fill[partition] = 0;
        records[partition] = 0;
        if (buffers[partition].length > keptSize) { // do not keep a huge record's buffer
            heldBytes -= buffers[partition].length;
            buffers[partition] = null;
        }
        return batch;
    }

    /** Frees every (empty) buffer, giving the memory back. */
    void freeAll() {
        for (int p = 0; p < buffers.length; p++) {
            if (buffers[p] == null) continue;
            heldBytes -= buffers[p].length;
            buffers[p] = null;
        }
    }

    long heldBytes() {
        return heldBytes;
    }
}
