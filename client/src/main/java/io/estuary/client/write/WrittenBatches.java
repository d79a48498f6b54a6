package io.estuary.client.write;

import io.estuary.client.batch.BatchCodec;
import io.estuary.client.batch.BatchHeader;
import io.estuary.common.protocol.PartitionStats;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * Encodes one map attempt's batches (numbered in order) and counts what it wrote to each partition: bytes,
 * batches, records and the sum of batch checksums, for the end-of-map report readers verify against. Confined to
 * the task's thread.
 */
final class WrittenBatches {
    private final BatchCodec codec;
    private final int mapId;
    private final int attemptId;
    private final long[] bytes;
    private final int[] batches;
    private final long[] records;
    private final long[] checksums;
    private int nextBatchId;

    WrittenBatches(BatchCodec codec, int mapId, int attemptId, int numPartitions) {
        this.codec = codec;
        this.mapId = mapId;
        this.attemptId = attemptId;
        this.bytes = new long[numPartitions];
        this.batches = new int[numPartitions];
        this.records = new long[numPartitions];
        this.checksums = new long[numPartitions];
    }

    /** Encodes a batch of {@code count} records and counts it in the partition's end-of-map report. */
    ByteBuf encode(int partition, byte[] data, int offset, int length, int count) {
        ByteBuf batch = codec.encode(mapId, attemptId, nextBatchId++, count, data, offset, length);
        bytes[partition] += batch.readableBytes();
        batches[partition]++;
        records[partition] += count;
        checksums[partition] += BatchHeader.checksum(batch, 0) & 0xffffffffL;
        return batch;
    }

    /** What was written to each partition that got any batch. */
    List<PartitionStats> stats() {
        List<PartitionStats> stats = new ArrayList<>();
        for (int p = 0; p < batches.length; p++) {
            if (batches[p] == 0) continue;
            stats.add(PartitionStats.newBuilder()
                    .setPartitionId(p)
                    .setBatches(batches[p])
                    .setRecords(records[p])
                    .setChecksum(checksums[p])
                    .build());
        }
        return stats;
    }

    /** Bytes written per partition (a copy). */
    long[] bytes() {
        return bytes.clone();
    }
}
