package io.estuary.client.write;

import io.netty.buffer.ByteBuf;

/**
 * One map attempt's serialized records not yet in a batch, one growable buffer per partition, and the bytes those
 * buffers hold (their capacity: what is really allocated). A buffer grows by doubling up to the buffer size (or to
 * one record, when a record is bigger), and is dropped after a batch that outgrew the buffer size. The buffers are
 * heap arrays, so nothing here needs releasing; the batch {@link #take} encodes belongs to the caller, whose push then
 * owns it. Confined to the task's thread.
 */
final class PartitionBuffers {
    private final int bufferSize;
    private final byte[][] buffers;
    private final int[] fill;
    private final int[] records;
    private long heldBytes;

    PartitionBuffers(int numPartitions, int bufferSize) {
        this.bufferSize = bufferSize;
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
        byte[] buf = buffers[partition];
        int need = fill[partition] + length;
        if (buf == null || buf.length < need) {
            int cap = Math.max(need, Math.min(bufferSize, Math.max(1024, buf == null ? 0 : buf.length * 2)));
            byte[] grown = new byte[cap];
            if (buf != null) System.arraycopy(buf, 0, grown, 0, fill[partition]);
            heldBytes += cap - (buf == null ? 0 : buf.length);
            buffers[partition] = buf = grown;
        }
        System.arraycopy(data, offset, buf, fill[partition], length);
        fill[partition] = need;
        records[partition] += count;
        return need >= bufferSize;
    }

    /** Encodes what the partition holds as one batch and empties it. */
    ByteBuf take(int partition, WrittenBatches encoder) {
        ByteBuf batch = encoder.encode(partition, buffers[partition], 0, fill[partition], records[partition]);
        fill[partition] = 0;
        records[partition] = 0;
        if (buffers[partition].length > bufferSize) { // do not keep a huge record's buffer
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
