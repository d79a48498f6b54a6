package io.estuary.worker.push;

import io.estuary.common.protocol.PartitionLocation;
import io.estuary.network.protocol.PushMergedData;
import io.estuary.worker.partition.PartitionRegistry;
import io.estuary.worker.storage.MemoryTracker;
import io.estuary.worker.storage.PartitionFileWriter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Forwards what a primary location took on to its replica through the {@link Replicator}, counting the forwarded
 * bytes as held memory until the replica has them (or failed). A merged push goes on as one merged push per replica
 * worker. Takes ownership of the buffers it is given to forward; never blocks. Thread-safe and stateless.
 */
final class ReplicaForwarder {
    private final PartitionRegistry registry;
    private final MemoryTracker memory;
    private final Replicator replicator;

    ReplicaForwarder(PartitionRegistry registry, MemoryTracker memory, Replicator replicator) {
        this.registry = registry;
        this.memory = memory;
        this.replicator = replicator;
    }

    /** The length of partition {@code i}'s part of a merged push's body of {@code bodyLen} bytes. */
    static int length(PushMergedData push, int i, int bodyLen) {
        int end = i + 1 < push.partitionIds.length ? push.offsets[i + 1] : bodyLen;
        return end - push.offsets[i];
    }

    /**
     * Sends the partitions of a merged push that have replicas on to them, one merged push per replica worker. The
     * forwarded bytes are retained slices of {@code body}.
     */
    List<CompletableFuture<Void>> forwardMerged(PushMergedData push, ByteBuf body) {
        List<CompletableFuture<Void>> out = new ArrayList<>();
        int n = push.partitionIds.length;
        PartitionLocation[] replicas = new PartitionLocation[n];
        boolean[] done = new boolean[n];
        for (int i = 0; i < n; i++)
            replicas[i] = registry.replicaOf(push.shuffleKey, push.partitionIds[i], push.epochs[i]);
        int bodyLen = body.readableBytes();
        for (int i = 0; i < n; i++) {
            if (replicas[i] == null || done[i]) continue;
            List<Integer> group = new ArrayList<>();
            for (int j = i; j < n; j++) {
                if (!done[j] && replicas[j] != null && replicas[j].getWorker().equals(replicas[i].getWorker())) {
                    group.add(j);
                    done[j] = true;
                }
            }
            int[] ids = new int[group.size()];
            int[] epochs = new int[group.size()];
            int[] offsets = new int[group.size()];
            CompositeByteBuf data = Unpooled.compositeBuffer(Math.max(2, group.size()));
            int pos = 0;
            for (int k = 0; k < group.size(); k++) {
                int j = group.get(k);
                ids[k] = push.partitionIds[j];
                epochs[k] = push.epochs[j];
                offsets[k] = pos;
                int len = length(push, j, bodyLen);
                data.addComponent(true, body.retainedSlice(body.readerIndex() + push.offsets[j], len));
                pos += len;
            }
            out.add(forward(replicas[i], push.shuffleKey, ids, epochs, offsets, data));
        }
        return out;
    }

    /**
     * Forwards to a replica, counting the forwarded bytes as held until the replica has them (or failed). A failed
     * forward tells the primaries' writers that their replica may lack data, so they commit from disk.
     */
    CompletableFuture<Void> forward(
            PartitionLocation replica, String shuffleKey, int[] partitions, int[] epochs, int[] offsets, ByteBuf data) {
        long n = data.readableBytes();
        memory.add(n);
        return replicator
                .forward(replica, shuffleKey, partitions, epochs, offsets, data)
                .whenComplete((v, e) -> {
                    memory.release(n);
                    if (e == null) return;
                    for (int i = 0; i < partitions.length; i++) {
                        PartitionFileWriter w = registry.writer(shuffleKey, partitions[i], epochs[i]);
                        if (w != null) w.replicaMissedData();
                    }
                });
    }
}
