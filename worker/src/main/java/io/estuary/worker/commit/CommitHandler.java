package io.estuary.worker.commit;

import io.estuary.common.protocol.CommitFilesRequest;
import io.estuary.common.protocol.CommitFilesResponse;
import io.estuary.common.protocol.CommittedPartition;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.util.ShuffleKey;
import io.estuary.network.rpc.ControlRpcHandler.Reply;
import io.estuary.worker.partition.PartitionRegistry;
import io.estuary.worker.storage.CommittedFile;
import io.estuary.worker.storage.PartitionFileWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Stage end: flushes every listed location and reports each as committed or failed. A location this worker does
 * not know (e.g. it restarted and lost it) is a failure, never a skip: skipping would lose its rows silently. A
 * location committed by an earlier run of this worker (it stopped gracefully, committing its open files, and
 * restarted) is reported committed from its record, unless the restart found its file missing or changed (then it
 * failed: its replica, or a stage rerun, stands in). Its bytes are checked against the recorded checksum when it is
 * first read, not here: a commit never reads files.
 *
 * <p>The answer comes within {@code maxWaitMs}: a location whose writes have not finished by then (a slow or hung
 * disk) is reported failed and pending, not waited for; its commit goes on, and a later ask finds it committed (or
 * waits again). Writes waiting for a disk declared failed or hung are given up by the storage layer, so such
 * locations fail at once, and are not pending.
 * Thread-safe; answers are written from whichever thread completes the last write.
 */
public final class CommitHandler {
    private final PartitionRegistry registry;
    private final long maxWaitMs;

    public CommitHandler(PartitionRegistry registry) {
        this(registry, Long.MAX_VALUE);
    }

    public CommitHandler(PartitionRegistry registry, long maxWaitMs) {
        this.registry = registry;
        this.maxWaitMs = maxWaitMs;
    }

    public void commit(CommitFilesRequest r, Reply reply) {
        String key = ShuffleKey.of(r.getAppId(), r.getShuffleId());
        CommitFilesResponse.Builder resp = CommitFilesResponse.newBuilder();
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        StringBuilder reasons = new StringBuilder();
        for (PartitionLocation loc : r.getLocationsList()) {
            PartitionFileWriter w = registry.writer(key, loc.getPartitionId(), loc.getEpoch());
            CommittedFile before = w == null ? registry.committedFile(key, loc.getPartitionId(), loc.getEpoch()) : null;
            String lost = before == null ? null : before.lostReason();
            if (lost != null) {
                synchronized (resp) {
                    resp.addFailed(loc);
                    reasons.append("partition ")
                            .append(loc.getPartitionId())
                            .append(" epoch ")
                            .append(loc.getEpoch())
                            .append(" of ")
                            .append(key)
                            .append(" is lost on this worker: ")
                            .append(lost)
                            .append("; ");
                }
                continue;
            }
            if (before != null) {
                synchronized (resp) {
                    resp.addCommitted(CommittedPartition.newBuilder()
                            .setPartitionId(loc.getPartitionId())
                            .setEpoch(loc.getEpoch())
                            .setBytes(before.length())
                            .setNumChunks(before.numChunks()));
                }
                continue;
            }
            if (w == null) {
                synchronized (resp) {
                    resp.addFailed(loc).addUnknown(loc);
                    reasons.append("partition ")
                            .append(loc.getPartitionId())
                            .append(" epoch ")
                            .append(loc.getEpoch())
                            .append(" of ")
                            .append(key)
                            .append(" is unknown on this worker; ");
                }
                continue;
            }
            CompletableFuture<CommittedFile> commit = w.commit();
            // A copy: the time limit is this answer's, the commit itself goes on.
            if (maxWaitMs < Long.MAX_VALUE) commit = commit.copy().orTimeout(maxWaitMs, TimeUnit.MILLISECONDS);
            pending.add(commit.handle((CommittedFile f, Throwable e) -> {
                synchronized (resp) {
                    if (e instanceof TimeoutException || e != null && e.getCause() instanceof TimeoutException) {
                        // Failed for drivers that know no better; pending for those that wait on.
                        resp.addFailed(loc).addPending(loc);
                        reasons.append("partition ")
                                .append(loc.getPartitionId())
                                .append(" epoch ")
                                .append(loc.getEpoch())
                                .append(" of ")
                                .append(key)
                                .append(" is not on disk after ")
                                .append(maxWaitMs)
                                .append(" ms (")
                                .append("estuary.worker.commit.maxWait): its disk is slow or hangs; ");
                    } else if (e != null) {
                        resp.addFailed(loc);
                        reasons.append(e.getMessage()).append("; ");
                    } else {
                        registry.committed(key, loc.getPartitionId(), loc.getEpoch(), f);
                        resp.addCommitted(CommittedPartition.newBuilder()
                                .setPartitionId(loc.getPartitionId())
                                .setEpoch(loc.getEpoch())
                                .setBytes(f.length())
                                .setNumChunks(f.numChunks()));
                    }
                }
                return null;
            }));
        }
        CompletableFuture.allOf(pending.toArray(new CompletableFuture[0])).whenComplete((v, e) -> {
            synchronized (resp) {
                reply.ok(resp.setFailureReason(reasons.toString()).build());
            }
        });
    }
}
