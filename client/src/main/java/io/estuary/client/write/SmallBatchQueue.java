package io.estuary.client.write;

import io.estuary.common.protocol.PartitionLocation;
import io.estuary.network.protocol.PushMergedData;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Small whole batches waiting, grouped by the worker of the location they were grouped by, to go out together in
 * merged pushes of up to the merged size: with thousands of partitions, one push per small batch would cost a round
 * trip each. Owns the batches it holds until it sends them. Confined to the task's thread.
 */
final class SmallBatchQueue {
    private final long mergedSize;
    private final PushSender sender;
    private final Map<String, QueuedBatches> queued = new LinkedHashMap<>();
    private long bytes;

    SmallBatchQueue(long mergedSize, PushSender sender) {
        this.mergedSize = mergedSize;
        this.sender = sender;
    }

    /** Small batches waiting for one worker. */
    private static final class QueuedBatches {
        final List<PartitionLocation> locations = new ArrayList<>();
        final List<ByteBuf> batches = new ArrayList<>();
        long bytes;
    }

    /** Queues a batch for {@code loc}; sends that worker's batches once they reach the merged size. */
    void add(PartitionLocation loc, ByteBuf batch) {
        String worker = Push.workerKey(loc.getWorker());
        QueuedBatches q = queued.get(worker);
        if (q == null) queued.put(worker, q = new QueuedBatches());
        q.locations.add(loc);
        q.batches.add(batch);
        q.bytes += batch.readableBytes();
        bytes += batch.readableBytes();
        if (q.bytes >= mergedSize || q.batches.size() >= PushMergedData.MAX_ENTRIES) send(worker);
    }

    private void send(String worker) {
        QueuedBatches q = queued.remove(worker);
        if (q == null) return;
        bytes -= q.bytes;
        sender.sendMerged(q.locations, q.batches);
    }

    /** Sends everything queued. */
    void sendAll() {
        for (String worker : new ArrayList<>(queued.keySet())) send(worker);
    }

    /** Bytes of the batches queued now. */
    long bytes() {
        return bytes;
    }

    /** Releases everything queued, unsent (the task was aborted). */
    void releaseAll() {
        for (QueuedBatches q : queued.values()) {
            for (ByteBuf b : q.batches) b.release();
        }
        queued.clear();
    }
}
