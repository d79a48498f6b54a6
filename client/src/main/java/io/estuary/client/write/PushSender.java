package io.estuary.client.write;

import io.estuary.client.spec.ShuffleSpec;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.common.util.EstuaryException;
import io.estuary.network.client.RemoteException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends one map attempt's pushes and sees each through to its end: waits for push permits ({@link PushTracker}),
 * sends, reads the acknowledgement (soft splits revive the partition in the background; a congested worker makes
 * the push hold its permits a while, so the task's next pushes wait), and handles a failure as
 * {@link PushFailurePolicy} says: back off, revive, split a merged push, end quietly or give up. A push stays in
 * flight until it is finally resolved.
 *
 * <p>{@link #pushBatch} and {@link #sendMerged} run on the task's thread; acknowledgements, failures and retries on
 * Netty or timer threads, touching only the push itself, the tracker, the counters (atomic) and the shared
 * {@link LocationTable}.
 */
final class PushSender {
    private static final Logger LOG = LoggerFactory.getLogger(PushSender.class);

    private final WriterPort port;
    private final ShuffleSpec spec;
    private final int mapId;
    private final int attemptId;
    private final PushFailurePolicy policy;
    private final long pushTimeoutMs;
    private final PushTracker tracker;
    private final long congestionMaxDelayMs;
    /** How long acknowledged pushes hold their permits while workers say this application pushes too fast. */
    private final AtomicLong congestionDelayMs = new AtomicLong();

    private final AtomicLong congestedAcks = new AtomicLong();
    /** Milliseconds acknowledged pushes were held back (their permits kept) because workers said slow down. */
    private final AtomicLong congestionHeldMs = new AtomicLong();
    /** Set by the task's thread before its first push; read by completions, which that push happens before. */
    private LocationTable table;

    private volatile boolean aborted;
    private volatile boolean stageEnded;

    PushSender(
            WriterPort port,
            ShuffleSpec spec,
            int mapId,
            int attemptId,
            PushFailurePolicy policy,
            long pushTimeoutMs,
            long maxBytesInFlight,
            long congestionMaxDelayMs) {
        this.port = port;
        this.spec = spec;
        this.mapId = mapId;
        this.attemptId = attemptId;
        this.policy = policy;
        this.pushTimeoutMs = pushTimeoutMs;
        this.tracker = new PushTracker(maxBytesInFlight);
        this.congestionMaxDelayMs = congestionMaxDelayMs;
    }

    /** The locations pushes go to; set once the shuffle is registered, before the first push. */
    void useTable(LocationTable table) {
        this.table = table;
    }

    /** Pushes one batch to the partition's current location, once permits for it are free. */
    void pushBatch(int partition, ByteBuf batch) {
        try {
            tracker.acquire(batch.readableBytes());
        } catch (RuntimeException e) {
            batch.release();
            throw e;
        }
        send(Push.single(table.get(partition), batch, null), 0);
    }

    /** One push of several partitions' batches; the body is a composite of them, nothing is copied. */
    void sendMerged(List<PartitionLocation> locs, List<ByteBuf> group) {
        String to = Push.workerKey(locs.get(0).getWorker());
        for (PartitionLocation l : locs) {
            // The push goes to the first location's worker: any other primary there would be written as a replica.
            if (!Push.workerKey(l.getWorker()).equals(to)) {
                for (ByteBuf b : group) b.release();
                throw new IllegalStateException("a merged push to " + to + " holds partition " + l.getPartitionId()
                        + " epoch " + l.getEpoch() + ", whose primary is on " + Push.workerKey(l.getWorker()));
            }
        }
        if (locs.size() == 1) {
            pushBatch(locs.get(0).getPartitionId(), group.get(0));
            return;
        }
        CompositeByteBuf body = Unpooled.compositeBuffer(Math.max(2, group.size()));
        for (ByteBuf b : group) body.addComponent(true, b);
        try {
            tracker.acquire(body.readableBytes());
        } catch (RuntimeException e) {
            body.release();
            throw e;
        }
        send(Push.merged(locs, group, body), 0);
    }

    /** Waits until every push is resolved, then throws the first failure, if any. */
    void awaitAll(long timeoutMs) {
        tracker.awaitAll(timeoutMs);
    }

    /** Stops retrying: pushes that fail from now on give up. */
    void abort() {
        aborted = true;
    }

    /** Whether a push found the stage already ended (this attempt lost the race to another). */
    boolean stageEnded() {
        return stageEnded;
    }

    long congestedAcks() {
        return congestedAcks.get();
    }

    long congestionHeldMs() {
        return congestionHeldMs.get();
    }

    private void send(Push push, int attempt) {
        CompletableFuture<ByteBuf> f;
        try {
            f = push.sendOn(port.pushClient(table.appId(), push.worker()), table.shuffleKey(), pushTimeoutMs);
        } catch (RemoteException | RuntimeException e) {
            f = new CompletableFuture<>();
            f.completeExceptionally(e);
        }
        f.whenComplete((ack, err) -> {
            if (err == null) {
                acknowledged(push, ack);
            } else {
                failed(push, attempt, err);
            }
        });
    }

    private void acknowledged(Push push, ByteBuf ack) {
        boolean congested = false;
        try {
            // The ack carries one status byte per partition when a partition file passed its soft split size or the
            // worker finds this application pushing faster than its share.
            for (int i = 0; i < ack.readableBytes() && i < push.locations.length; i++) {
                StatusCode s = StatusCode.of(ack.getByte(ack.readerIndex() + i));
                if (s == StatusCode.CONGESTED) congested = true;
                if (s != StatusCode.SOFT_SPLIT) continue;
                PartitionLocation loc = push.locations[i];
                if (table.claimSplit(loc.getPartitionId(), loc.getEpoch())) {
                    port.revive(spec, table, loc.getPartitionId(), loc.getEpoch(), null, true);
                }
            }
        } finally {
            ack.release();
        }
        if (congested) congestedAcks.incrementAndGet(); // counted even when ignored (congestionMaxDelay 0)
        if (!congested || congestionMaxDelayMs == 0) {
            congestionDelayMs.set(0);
            resolved(push, null);
            return;
        }
        // Slow down: this push keeps its permits a while, so the task's next pushes wait; longer while it lasts.
        long delay = congestionDelayMs.updateAndGet(d -> Math.min(congestionMaxDelayMs, Math.max(50, d * 2)));
        congestionHeldMs.addAndGet(delay);
        Runnable release = () -> resolved(push, null);
        port.retryTimerSchedule(release, delay, release); // acknowledged: a closing client releases it at once
    }

    /**
     * Runs {@code retry} of {@code push} after {@code delayMs}; if the client closes first, the push is settled as
     * failed instead, so its buffer is released and a task waiting for its pushes fails at once rather than time out.
     */
    private void retryLater(Push push, Runnable retry, long delayMs) {
        port.retryTimerSchedule(
                retry,
                delayMs,
                () -> resolved(
                        push,
                        new EstuaryException("push of " + push.describe(table.shuffleKey(), mapId, attemptId)
                                + " abandoned: the shuffle client closed")));
    }

    /** The push is settled for good: return its permits (or its parent's, with its last sibling). */
    private void resolved(Push push, Throwable failure) {
        push.body.release();
        int permits = push.size;
        if (push.parentOpen != null) {
            if (push.parentOpen.decrementAndGet() > 0) {
                if (failure != null) tracker.recordFailure(failure);
                return;
            }
            permits = push.parentSize;
        }
        if (failure == null) tracker.succeeded(permits);
        else tracker.failed(permits, failure);
    }

    private void failed(Push push, int attempt, Throwable err) {
        StatusCode status = RemoteException.statusOf(err);
        String what = push.describe(table.shuffleKey(), mapId, attemptId);
        boolean abortedNow = aborted;
        switch (policy.onFailure(status, attempt, push.isMerged(), abortedNow)) {
            case STAGE_ENDED:
                // Only an attempt that lost the race still pushes once the stage committed: nothing of it is read.
                stageEnded = true;
                resolved(push, null);
                return;
            case GIVE_UP:
                resolved(
                        push,
                        abortedNow
                                ? new EstuaryException("push of " + what + " abandoned: the task was aborted")
                                : new EstuaryException(
                                        "push of " + what + " failed after " + (attempt + 1) + " tries (" + status
                                                + "): " + err.getMessage(),
                                        err));
                return;
            case SPLIT:
                splitMerged(push, attempt, status, err);
                return;
            case REVIVE:
                revive(push, attempt, status, err, what);
                return;
            case BACK_OFF: {
                long wait = policy.backoff(attempt);
                LOG.info(
                        "Push of {} refused ({}: {}); retry {} of {} in {} ms",
                        what,
                        status,
                        err.getMessage(),
                        attempt + 1,
                        policy.retries(),
                        wait);
                if (push.isMerged()) {
                    // Refused for the worker's sake: the same push again. Had a partition of it moved meanwhile, the
                    // worker still takes its old epoch, or refuses and the push is then split.
                    retryLater(push, () -> send(push, attempt + 1), wait);
                    return;
                }
                // Sent to the partition's location as it is then: another task may have moved it meanwhile.
                int partition = push.locations[0].getPartitionId();
                retryLater(push, () -> send(Push.single(table.get(partition), push.body, push), attempt + 1), wait);
                return;
            }
            default:
                throw new IllegalStateException("no handling of a push failure with " + status);
        }
    }

    /** Moves the partition of a failed single push to a new location and sends the push there. */
    private void revive(Push push, int attempt, StatusCode status, Throwable err, String what) {
        PartitionLocation loc = push.locations[0];
        WorkerAddress failedWorker = PushFailurePolicy.blamesWorker(status) ? loc.getWorker() : null;
        if (table.claimFailureLog(loc.getPartitionId(), loc.getEpoch())) {
            LOG.warn(
                    "Push of {} failed ({}: {}); moving partition {} to a new location",
                    what,
                    status,
                    err.getMessage(),
                    loc.getPartitionId());
        }
        port.revive(spec, table, loc.getPartitionId(), loc.getEpoch(), failedWorker, false)
                .whenComplete((n, e) -> {
                    if (e == null) {
                        retryLater(push, () -> send(Push.single(n, push.body, push), attempt + 1), 0);
                    } else if (PushFailurePolicy.onReviveFailure(RemoteException.statusOf(e))
                            == PushFailureAction.STAGE_ENDED) {
                        // The driver already commits this shuffle (another attempt of this map ended first): nothing of
                        // this
                        // attempt is read, so it ends quietly, as when a push says so.
                        stageEnded = true;
                        resolved(push, null);
                    } else {
                        LOG.warn(
                                "Reviving partition {} of {} failed: {}",
                                loc.getPartitionId(),
                                table.shuffleKey(),
                                e.toString());
                        // The driver could not answer now: wait like a busy worker, then try the whole thing again.
                        retryLater(push, () -> failed(push, attempt + 1, err), policy.backoff(attempt));
                    }
                });
    }

    /** A failed merged push becomes one single push per partition, each going through the failure handling above. */
    private void splitMerged(Push merged, int attempt, StatusCode status, Throwable err) {
        int n = merged.locations.length;
        AtomicInteger open = new AtomicInteger(n);
        List<Push> singles = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            ByteBuf slice = merged.body.retainedSlice(merged.body.readerIndex() + merged.offsets[i], merged.length(i));
            singles.add(
                    new Push(new PartitionLocation[] {merged.locations[i]}, new int[] {0}, slice, merged.size, open));
        }
        merged.body.release();
        PushFailureAction action = PushFailurePolicy.forSplitPart(status);
        for (Push single : singles) {
            if (action == PushFailureAction.RESEND || action == PushFailureAction.RESEND_AFTER_BACK_OFF) {
                // Only some partitions may be full, on a failed disk or have a failed replica, or the worker was
                // briefly
                // busy: let each single find out for itself.
                long wait = action == PushFailureAction.RESEND_AFTER_BACK_OFF ? policy.backoff(attempt) : 0;
                retryLater(single, () -> send(single, attempt + 1), wait);
            } else {
                failed(single, attempt, err);
            }
        }
    }
}
