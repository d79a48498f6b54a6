package io.estuary.client.read;

import io.estuary.client.batch.BatchHeader;
import io.estuary.common.protocol.PartitionFiles;
import io.netty.buffer.ByteBuf;

/**
 * What a reader read of one partition (batches, records, the sum of batch checksums) and what the winning map
 * attempts reported writing to it, for the integrity check at the end of a read; also the partition's count of
 * failures after a worker had answered (its retry budget). Shared by the partition's epochs. Confined to the
 * reader's thread.
 */
final class PartitionCounts {
    private long batches;
    private long records;
    private long checksum;
    /** Failures after a worker had answered, over every epoch and copy (the partition's retry budget). */
    int failures;

    private final PartitionFiles expected;

    PartitionCounts(PartitionFiles expected) {
        this.expected = expected;
    }

    /** Counts the batch whose header starts at {@code h} in {@code chunk}. */
    void count(ByteBuf chunk, int h) {
        batches++;
        records += BatchHeader.records(chunk, h);
        checksum += BatchHeader.checksum(chunk, h) & 0xffffffffL;
    }

    /**
     * Null when what was read adds up to what was written; otherwise what differs. {@code batchesOnly}: only batches
     * are compared (the read covers part of the maps, see WrittenCounts).
     */
    String mismatch(boolean batchesOnly) {
        PartitionFiles x = expected;
        if (batches == x.getExpectedBatches()
                && (batchesOnly || records == x.getExpectedRecords() && checksum == x.getExpectedChecksum())) {
            return null;
        }
        return "read " + batches + " batches, " + records + " records, checksum " + Long.toHexString(checksum)
                + "; the maps wrote " + x.getExpectedBatches() + " batches, " + x.getExpectedRecords()
                + " records, checksum "
                + Long.toHexString(x.getExpectedChecksum());
    }
}
