package io.estuary.worker.push;

import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.common.util.ShuffleKey;
import io.estuary.network.auth.Authorizer;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.client.RemoteException;
import io.estuary.network.protocol.PushData;
import io.estuary.network.protocol.PushMergedData;
import io.estuary.network.server.ResponseCallback;
import io.estuary.network.server.RpcHandler;
import io.estuary.worker.lifecycle.PushGate;
import io.estuary.worker.partition.PartitionRegistry;
import io.estuary.worker.storage.MemoryTracker;
import io.estuary.worker.storage.PartitionFileWriter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The push path: appends pushed batches to their partition's writer and, for a primary location with a replica,
 * forwards them to the replica, acknowledging only once the replica holds them too. Runs on Netty threads and never
 * blocks: data is handed to the writer's in-memory buffer (flushed by the disk's own threads) and forwarded by the
 * {@link Replicator} ({@link ReplicaForwarder}).
 *
 * <p>Memory is bounded by pausing reads ({@link PushReadThrottle}), not by refusing pushes already received.
 * Refusals carry a {@link StatusCode}: unknown location (also a client's push to a replica copy, which takes only
 * pushes its primary's worker forwards, and a forwarded push to a primary), hard split, disk failed, stage ended,
 * replica failed, and
 * busy ({@code RETRY_LATER}) only when direct memory itself runs out. A successful push is acknowledged with an
 * empty body, or with one status byte per partition when some partition file passed its soft split size
 * ({@code SOFT_SPLIT}) or the application pushes faster than its share ({@code CONGESTED}, from
 * {@link CongestionControl}).
 *
 * <p>Every push is authorized before anything else ({@link Authorizer}): a client's push needs the identity of the
 * application its shuffle key names (or the cluster's); a push forwarded by a primary's worker to its replica (marked
 * {@code forwarded}) needs the cluster's. A refused push is answered {@code UNAUTHENTICATED} or {@code FORBIDDEN} and
 * changes nothing.
 *
 * <p>Thread-safe and stateless (state lives in the registry and the writers). Owns each push's body: it is
 * released on every path, after the writer has copied it and the forwarded duplicate or slices have been sent.
 */
public final class PushHandler implements RpcHandler {
    private final PartitionRegistry registry;
    private final MemoryTracker memory;
    private final ReplicaForwarder forwarder;
    private final PushReadThrottle throttle;
    private final CongestionControl congestion;
    private final long softSplit;
    private final long hardSplit;
    private final PushGate gate;
    private final FrameLimit frameLimit;
    private final Authorizer authorizer;
    private static final AttributeKey<StalledPushWatch> STALL_WATCH = AttributeKey.valueOf("estuary.stalledPushWatch");

    public PushHandler(
            PartitionRegistry registry,
            MemoryTracker memory,
            Replicator replicator,
            CongestionControl congestion,
            long softSplitBytes,
            long hardSplitBytes) {
        this(registry, memory, replicator, congestion, softSplitBytes, hardSplitBytes, new PushGate());
    }

    /** With a gate: once it closes (the worker is stopping), pushes are refused with {@code HARD_SPLIT}. */
    public PushHandler(
            PartitionRegistry registry,
            MemoryTracker memory,
            Replicator replicator,
            CongestionControl congestion,
            long softSplitBytes,
            long hardSplitBytes,
            PushGate gate) {
        this(registry, memory, replicator, congestion, softSplitBytes, hardSplitBytes, gate, null);
    }

    /** With a bound on what one connection may hold unfinished (its largest frame; null: the network's). */
    public PushHandler(
            PartitionRegistry registry,
            MemoryTracker memory,
            Replicator replicator,
            CongestionControl congestion,
            long softSplitBytes,
            long hardSplitBytes,
            PushGate gate,
            FrameLimit frameLimit) {
        this(
                registry,
                memory,
                replicator,
                congestion,
                softSplitBytes,
                hardSplitBytes,
                gate,
                frameLimit,
                Authorizer.off("worker-push"));
    }

    /** With pushes authorized by {@code authorizer}. */
    public PushHandler(
            PartitionRegistry registry,
            MemoryTracker memory,
            Replicator replicator,
            CongestionControl congestion,
            long softSplitBytes,
            long hardSplitBytes,
            PushGate gate,
            FrameLimit frameLimit,
            Authorizer authorizer) {
        this.authorizer = authorizer;
        this.frameLimit = frameLimit;
        this.gate = gate;
        this.congestion = congestion;
        this.registry = registry;
        this.memory = memory;
        this.forwarder = new ReplicaForwarder(registry, memory, replicator);
        this.throttle = new PushReadThrottle(memory);
        this.softSplit = softSplitBytes;
        this.hardSplit = hardSplitBytes;
    }

    @Override
    public void receive(Channel channel, ByteBuf body, ResponseCallback callback) {
        callback.onFailure(
                StatusCode.BAD_REQUEST,
                "the push port takes only pushed data; send control requests to the " + "worker's rpc port");
    }

    public PushReadThrottle throttle() {
        return throttle;
    }

    /**
     * Pushes received but not yet a whole frame count against the memory bound too, and a connection in the middle of
     * a frame is read on until it is whole (see {@link PushReadThrottle}).
     */
    @Override
    public io.estuary.network.protocol.FrameDecoder.Progress receiveProgress(Channel channel) {
        return (change, held, frames) -> {
            if (change > 0) memory.add(change);
            else if (change < 0) memory.release(-change);
            throttle.received(channel, held, frames);
            StalledPushWatch watch = channel.attr(STALL_WATCH).get();
            if (watch != null) watch.received(held, frames);
        };
    }

    /** What one connection may hold unfinished: its largest frame. */
    @Override
    public FrameLimit frameLimit() {
        return frameLimit;
    }

    @Override
    public void channelActive(Channel channel) {
        throttle.opened(channel);
        channel.attr(STALL_WATCH).set(StalledPushWatch.start(channel, "worker-push"));
    }

    @Override
    public void channelInactive(Channel channel) {
        throttle.closed(channel);
        StalledPushWatch watch = channel.attr(STALL_WATCH).getAndSet(null);
        if (watch != null) watch.stop();
    }

    /** Holds a client's connection while its application pushes over the rate it is allowed (never a replica's). */
    private void enforce(Channel channel, String shuffleKey, long bytes, boolean forwarded) {
        if (forwarded) return;
        long hold = congestion.holdNanos(shuffleKey, bytes);
        if (hold > 0) throttle.hold(channel, hold, congestion.userOf(ShuffleKey.appId(shuffleKey)));
    }

    @Override
    public void receivePush(Channel channel, PushData push, ResponseCallback callback) {
        if (!authorized(channel, push.shuffleKey, push.forwarded, "push", callback)) {
            push.body().release();
            return;
        }
        if (!gate.tryEnter()) {
            push.body().release();
            refuseStopping(callback);
            return;
        }
        try {
            receiveOpenPush(channel, push, callback);
        } finally {
            gate.exit();
        }
    }

    @Override
    public void receivePushMerged(Channel channel, PushMergedData push, ResponseCallback callback) {
        if (!authorized(channel, push.shuffleKey, push.forwarded, "push_merged", callback)) {
            push.body().release();
            return;
        }
        if (!gate.tryEnter()) {
            push.body().release();
            refuseStopping(callback);
            return;
        }
        try {
            receiveOpenPushMerged(channel, push, callback);
        } finally {
            gate.exit();
        }
    }

    /**
     * Whether the connection may push to {@code shuffleKey}; if not, answers the refusal. A forwarded push is
     * replication, which only servers do; any other names its application in the shuffle key.
     */
    private boolean authorized(
            Channel channel, String shuffleKey, boolean forwarded, String request, ResponseCallback callback) {
        if (!authorizer.enabled()) return true;
        try {
            if (forwarded) authorizer.checkCluster(channel, "replicate");
            else authorizer.checkApplication(channel, request, ShuffleKey.appId(shuffleKey));
            return true;
        } catch (StatusException e) {
            callback.onFailure(e.status(), e.getMessage());
        } catch (IllegalArgumentException e) {
            callback.onFailure(StatusCode.BAD_REQUEST, e.getMessage());
        }
        return false;
    }

    /**
     * A stopping worker takes no more data. {@code HARD_SPLIT} makes the writer move the partition to a new epoch
     * elsewhere without blaming this worker (it comes back after a restart); what it took is committed by the stop.
     */
    private static void refuseStopping(ResponseCallback callback) {
        callback.onFailure(StatusCode.HARD_SPLIT, "the worker is stopping: push to the partition's next epoch");
    }

    private void receiveOpenPush(Channel channel, PushData push, ResponseCallback callback) {
        ByteBuf body = ((NettyManagedBuffer) push.body()).buf();
        int bytes = body.readableBytes();
        PartitionLocation replica;
        ByteBuf forward = null;
        PartitionFileWriter w;
        try {
            w = accepting(channel, push.shuffleKey, push.partitionId, push.epoch, push.forwarded, bytes);
            replica = registry.replicaOf(push.shuffleKey, push.partitionId, push.epoch);
            if (replica != null) forward = body.retainedDuplicate();
            w.append(body.retain());
        } catch (StatusException e) {
            if (forward != null) forward.release();
            callback.onFailure(e.status(), e.getMessage());
            return;
        } finally {
            body.release();
        }
        congestion.recordPush(push.shuffleKey, bytes);
        enforce(channel, push.shuffleKey, bytes, push.forwarded);
        byte status = w.size() >= softSplit
                ? StatusCode.SOFT_SPLIT.id()
                : congestion.congested(push.shuffleKey) ? StatusCode.CONGESTED.id() : StatusCode.OK.id();
        if (replica == null) {
            callback.onSuccess(ack(new byte[] {status}));
            return;
        }
        forwarder
                .forward(
                        replica,
                        push.shuffleKey,
                        new int[] {push.partitionId},
                        new int[] {push.epoch},
                        new int[] {0},
                        forward)
                .whenComplete((v, e) -> answer(callback, e, new byte[] {status}));
    }

    private void receiveOpenPushMerged(Channel channel, PushMergedData push, ResponseCallback callback) {
        ByteBuf body = ((NettyManagedBuffer) push.body()).buf();
        try {
            int n = push.partitionIds.length;
            PartitionFileWriter[] writers = new PartitionFileWriter[n];
            int bodyLen = body.readableBytes();
            // Check every location before appending any, so a refused push leaves nothing half-written.
            for (int i = 0; i < n; i++) {
                writers[i] = accepting(
                        channel,
                        push.shuffleKey,
                        push.partitionIds[i],
                        push.epochs[i],
                        push.forwarded,
                        ReplicaForwarder.length(push, i, bodyLen));
            }
            List<CompletableFuture<Void>> forwards = forwarder.forwardMerged(push, body);
            byte[] statuses = new byte[n];
            congestion.recordPush(push.shuffleKey, bodyLen);
            enforce(channel, push.shuffleKey, bodyLen, push.forwarded);
            byte otherwise = congestion.congested(push.shuffleKey) ? StatusCode.CONGESTED.id() : StatusCode.OK.id();
            for (int i = 0; i < n; i++) {
                int start = push.offsets[i];
                writers[i].append(
                        body.retainedSlice(body.readerIndex() + start, ReplicaForwarder.length(push, i, bodyLen)));
                statuses[i] = writers[i].size() >= softSplit ? StatusCode.SOFT_SPLIT.id() : otherwise;
            }
            CompletableFuture.allOf(forwards.toArray(new CompletableFuture[0]))
                    .whenComplete((v, e) -> answer(callback, e, statuses));
        } catch (StatusException e) {
            callback.onFailure(e.status(), e.getMessage());
        } finally {
            body.release();
        }
    }

    /**
     * The writer of a location that may take {@code bytes} more now, or a refusal with its status. A replica copy
     * takes only pushes forwarded by its primary's worker, and a primary only pushes from clients: a replica written
     * on its own would be acknowledged while the primary (which readers use first) never had the data.
     */
    private PartitionFileWriter accepting(
            Channel channel, String shuffleKey, int partition, int epoch, boolean forwarded, int bytes) {
        PartitionFileWriter w = registry.writer(shuffleKey, partition, epoch);
        if (w == null) {
            throw new StatusException(
                    StatusCode.UNKNOWN_LOCATION,
                    "unknown location: partition " + partition + " epoch "
                            + epoch + " of shuffle " + shuffleKey
                            + " is not reserved on this worker (unknown application or "
                            + "shuffle, expired, or the worker restarted)");
        }
        boolean replicaCopy = registry.isReplicaCopy(shuffleKey, partition, epoch);
        if (replicaCopy && !forwarded) {
            throw new StatusException(
                    StatusCode.UNKNOWN_LOCATION,
                    "partition " + partition + " epoch " + epoch
                            + " of shuffle " + shuffleKey
                            + " is held here as a replica copy, which takes only data forwarded by its "
                            + "primary's worker: push to the primary location (revive to learn the current one)");
        }
        if (!replicaCopy && forwarded) {
            throw new StatusException(
                    StatusCode.UNKNOWN_LOCATION,
                    "partition " + partition + " epoch " + epoch
                            + " of shuffle " + shuffleKey
                            + " is not a replica copy on this worker, yet a primary forwarded data to "
                            + "it: the locations of the two workers disagree");
        }
        if (replicaCopy) throttle.carriesReplicas(channel);
        if (w.size() > 0 && w.size() + bytes > hardSplit) {
            throw new StatusException(
                    StatusCode.HARD_SPLIT,
                    w + " holds " + w.size() + " bytes, at its hard split size " + "(estuary.worker.split.hardSize "
                            + hardSplit + "): push to the partition's next epoch");
        }
        return w;
    }

    /** Acknowledges once local append and replication are done, or refuses with the replica's trouble. */
    private static void answer(ResponseCallback callback, Throwable replicaFailure, byte[] statuses) {
        if (replicaFailure == null) {
            callback.onSuccess(ack(statuses));
            return;
        }
        StatusCode s = RemoteException.statusOf(replicaFailure);
        // A busy replica is a busy push; a stage that ended is over for both copies; anything else: revive.
        StatusCode mine = s == StatusCode.RETRY_LATER || s == StatusCode.STAGE_ENDED ? s : StatusCode.REPLICATE_FAILED;
        callback.onFailure(
                mine, "replicating to the partition's replica failed (" + s + "): " + replicaFailure.getMessage());
    }

    private static ByteBuf ack(byte[] statuses) {
        for (byte b : statuses) if (b != StatusCode.OK.id()) return Unpooled.wrappedBuffer(statuses);
        return Unpooled.EMPTY_BUFFER;
    }
}
