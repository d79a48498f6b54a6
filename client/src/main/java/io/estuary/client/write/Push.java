package io.estuary.client.write;

import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.client.TransportClient;
import io.netty.buffer.ByteBuf;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One push request, kept (and its body held) until it finally succeeds or fails, so it can be sent again. A merged
 * push that fails is split into single pushes, one per partition, each handled on its own; the merged push's
 * permits are returned when the last of them is resolved. The body is owned by the push until {@link PushSender}
 * settles it; the fields never change, so a push may be read from any thread.
 */
final class Push {
    final PartitionLocation[] locations;
    final int[] offsets;
    final ByteBuf body;
    final int size;
    /** For the single pushes a failed merged push became: the merged push's size and its pushes still open. */
    final int parentSize;

    final AtomicInteger parentOpen;

    Push(PartitionLocation[] locations, int[] offsets, ByteBuf body, int parentSize, AtomicInteger parentOpen) {
        this.locations = locations;
        this.offsets = offsets;
        this.body = body;
        this.size = body.readableBytes();
        this.parentSize = parentSize;
        this.parentOpen = parentOpen;
    }

    static Push single(PartitionLocation loc, ByteBuf body, Push parent) {
        return new Push(
                new PartitionLocation[] {loc},
                new int[] {0},
                body,
                parent == null ? -1 : parent.parentSize < 0 ? parent.size : parent.parentSize,
                parent == null ? null : parent.parentOpen);
    }

    static Push merged(List<PartitionLocation> locs, List<ByteBuf> group, ByteBuf body) {
        int[] offsets = new int[group.size()];
        int pos = 0;
        for (int i = 0; i < offsets.length; i++) {
            offsets[i] = pos;
            pos += group.get(i).readableBytes();
        }
        return new Push(locs.toArray(new PartitionLocation[0]), offsets, body, -1, null);
    }

    /** The worker a push goes to, as a key: pushes to one worker are merged. */
    static String workerKey(WorkerAddress w) {
        return w.getHost() + ":" + w.getPushPort();
    }

    boolean isMerged() {
        return locations.length > 1;
    }

    WorkerAddress worker() {
        return locations[0].getWorker();
    }

    int length(int i) {
        return (i + 1 < offsets.length ? offsets[i + 1] : size) - offsets[i];
    }

    CompletableFuture<ByteBuf> sendOn(TransportClient c, String shuffleKey, long timeoutMs) {
        NettyManagedBuffer buf = new NettyManagedBuffer(body.retainedDuplicate()); // the transport releases its copy
        if (!isMerged()) {
            return c.pushData(shuffleKey, locations[0].getPartitionId(), locations[0].getEpoch(), buf, timeoutMs);
        }
        int n = locations.length;
        int[] ids = new int[n];
        int[] epochs = new int[n];
        for (int i = 0; i < n; i++) {
            ids[i] = locations[i].getPartitionId();
            epochs[i] = locations[i].getEpoch();
        }
        return c.pushMergedData(shuffleKey, ids, epochs, offsets, buf, timeoutMs);
    }

    String describe(String shuffleKey, int mapId, int attemptId) {
        PartitionLocation l = locations[0];
        return size + " bytes of "
                + (isMerged()
                        ? locations.length + " partitions"
                        : "partition " + l.getPartitionId() + " epoch " + l.getEpoch())
                + " of " + shuffleKey + " (map " + mapId + " attempt " + attemptId + ") to "
                + l.getWorker().getHost() + ":" + l.getWorker().getPushPort();
    }
}
