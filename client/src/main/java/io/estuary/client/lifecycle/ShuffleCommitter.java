package io.estuary.client.lifecycle;

import io.estuary.client.retry.UnreachableBackoff;
import io.estuary.common.protocol.CommitFilesRequest;
import io.estuary.common.protocol.CommitFilesResponse;
import io.estuary.common.protocol.CommittedPartition;
import io.estuary.common.protocol.EpochFiles;
import io.estuary.common.protocol.LocationRole;
import io.estuary.common.protocol.PartitionFiles;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.common.time.Clock;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stage end: asks every worker to commit every copy it holds, asks again for copies not confirmed (a worker that
 * answered that they are still being written: as long as the deadline allows; one that answered they failed: up to a
 * retry count; a worker that could not be reached, e.g. restarting: with a back-off, for a bounded
 * time; all within a deadline), and reports what was committed: per partition, each epoch with its committed copies
 * (primary first). An epoch none of whose copies committed marks its partition incomplete; whether that lost data
 * is for readers to decide with the integrity counts (an epoch nobody pushed to holds nothing). Never skips a
 * failure silently. Stateless apart from its connections; thread-safe.
 */
final class ShuffleCommitter {
    private static final Logger LOG = LoggerFactory.getLogger(ShuffleCommitter.class);

    private final TransportClientFactory connections;
    private final String appId;
    private final int retries;
    private final long timeoutMs;
    private final long unreachableMs;
    private final Clock clock;

    ShuffleCommitter(
            TransportClientFactory connections,
            String appId,
            int retries,
            long timeoutMs,
            long unreachableMs,
            Clock clock) {
        this.connections = connections;
        this.clock = clock;
        this.appId = appId;
        this.retries = retries;
        this.timeoutMs = timeoutMs;
        this.unreachableMs = unreachableMs;
    }

    private static long key(int partition, int epoch) {
        return ((long) partition << 32) | (epoch & 0xffffffffL);
    }

    /** What is left to commit on one worker, and how it is being asked. Confined to the committing thread. */
    private static final class WorkerCommit {
        final String worker;
        List<PartitionLocation> todo;
        int refusalsLeft;
        final UnreachableBackoff unreachable;
        /** The ask under way, or null while waiting to ask again. */
        CompletableFuture<CommitFilesResponse> call;
        /** When to ask again, while {@link #call} is null. */
        long dueMs;

        WorkerCommit(String worker, List<PartitionLocation> todo, int refusalsLeft, long unreachableMs) {
            this.worker = worker;
            this.todo = todo;
            this.refusalsLeft = refusalsLeft;
            this.unreachable = new UnreachableBackoff(unreachableMs);
        }
    }

    /**
     * Commits {@code locations} (every epoch, with peers) of a shuffle with {@code numPartitions} partitions. Workers
     * are asked in parallel; one that answers but does not confirm some locations is asked again at once (up to the
     * retry count), one that cannot be reached (restarting) is asked again after a back-off for as long as the
     * unreachable timeout allows; all within the commit timeout.
     */
    List<PartitionFiles.Builder> commit(int shuffleId, int numPartitions, List<PartitionLocation> locations) {
        long deadline = clock.millis() + timeoutMs;
        List<WorkerCommit> open = new ArrayList<>();
        for (Map.Entry<String, List<PartitionLocation>> e :
                WorkerCalls.copiesByWorker(locations).entrySet()) {
            open.add(new WorkerCommit(e.getKey(), e.getValue(), retries, unreachableMs));
        }
        Map<Long, Long> bytes = new HashMap<>();
        Map<Long, List<PartitionLocation>> committed = new HashMap<>();
        List<String> problems = new ArrayList<>();
        while (!open.isEmpty()) {
            long now = clock.millis();
            if (now >= deadline) {
                for (WorkerCommit w : open) {
                    problems.add(
                            w.worker + ": " + w.todo.size() + " locations not confirmed within the commit timeout");
                }
                break;
            }
            boolean progressed = false;
            for (Iterator<WorkerCommit> it = open.iterator(); it.hasNext(); ) {
                WorkerCommit w = it.next();
                if (w.call == null && w.dueMs <= now) w.call = ask(shuffleId, w.todo);
                if (w.call == null || !w.call.isDone()) continue;
                progressed = true;
                if (!answered(shuffleId, w, now, bytes, committed, problems)) it.remove();
            }
            if (!progressed) awaitAny(shuffleId, open, deadline);
        }
        if (!problems.isEmpty()) {
            LOG.warn(
                    "Shuffle {} of {}: some copies did not commit (their replicas, or a rerun, stand in): {}",
                    shuffleId,
                    appId,
                    problems);
        }
        return files(numPartitions, locations, committed, bytes);
    }

    /**
     * Takes in the finished ask of {@code w}: records what it committed and decides what comes next. Returns whether
     * the worker is to be asked again (its {@code todo} and {@code dueMs} set), false when it is done or given up.
     */
    private boolean answered(
            int shuffleId,
            WorkerCommit w,
            long now,
            Map<Long, Long> bytes,
            Map<Long, List<PartitionLocation>> committed,
            List<String> problems) {
        CompletableFuture<CommitFilesResponse> call = w.call;
        w.call = null;
        CommitFilesResponse r;
        try {
            r = call.join();
        } catch (CompletionException | CancellationException ex) {
            Throwable cause = ex.getCause() != null ? ex.getCause() : ex;
            // No answer at all (refused, reset, closed): the worker may be restarting, and a restarted worker answers
            // for
            // what it committed before. An answer that is an error is a refusal: asked again at once, a few times.
            boolean unreachable = RemoteException.statusOf(cause) == StatusCode.CONNECTION_FAILED;
            long wait = unreachable ? w.unreachable.nextWait(now) : w.refusalsLeft-- > 0 ? 0 : -1;
            if (wait < 0) {
                problems.add(w.worker + ": " + cause.getMessage());
                return false;
            }
            LOG.info(
                    "Commit of shuffle {} of {} on {} failed ({}); asking again in {} ms",
                    shuffleId,
                    appId,
                    w.worker,
                    cause.getMessage(),
                    wait);
            w.dueMs = now + wait;
            return true;
        }
        w.unreachable.reset();
        Map<Long, PartitionLocation> byKey = new HashMap<>();
        for (PartitionLocation l : w.todo) byKey.put(key(l.getPartitionId(), l.getEpoch()), l);
        for (CommittedPartition c : r.getCommittedList()) {
            PartitionLocation l = byKey.remove(key(c.getPartitionId(), c.getEpoch()));
            if (l == null) continue;
            long k = key(c.getPartitionId(), c.getEpoch());
            bytes.merge(k, c.getBytes(), Math::max);
            committed
                    .computeIfAbsent(k, x -> new ArrayList<>())
                    .add(l.toBuilder().clearPeer().build());
        }
        if (byKey.isEmpty()) return false;
        // A location the worker does not know stays unknown: asking again only helps with transient failures. One
        // still being written (a slow disk at work) is waited for again, within the commit timeout, at no cost to
        // the retry count: only failures use that up.
        List<PartitionLocation> retry = new ArrayList<>();
        List<PartitionLocation> failed = new ArrayList<>();
        for (PartitionLocation l : byKey.values()) {
            if (listed(r.getPendingList(), l)) retry.add(l);
            else if (!listed(r.getUnknownList(), l)) failed.add(l);
        }
        if (retry.size() < byKey.size()) {
            problems.add(w.worker + ": " + (byKey.size() - retry.size()) + " locations not committed: "
                    + r.getFailureReason());
        }
        if (!failed.isEmpty() && w.refusalsLeft-- > 0) retry.addAll(failed);
        if (retry.isEmpty()) return false;
        w.todo = retry;
        w.dueMs = now;
        return true;
    }

    /** Waits until an ask finishes, a worker is due to be asked again, or the deadline passes. */
    private void awaitAny(int shuffleId, List<WorkerCommit> open, long deadline) {
        long wakeAt = deadline;
        List<CompletableFuture<CommitFilesResponse>> calls = new ArrayList<>();
        for (WorkerCommit w : open) {
            if (w.call != null) calls.add(w.call);
            else wakeAt = Math.min(wakeAt, w.dueMs);
        }
        long waitMs = Math.max(1, wakeAt - clock.millis());
        try {
            if (calls.isEmpty()) {
                Thread.sleep(waitMs);
            } else {
                CompletableFuture.anyOf(calls.toArray(new CompletableFuture[0])).get(waitMs, TimeUnit.MILLISECONDS);
            }
        } catch (TimeoutException | ExecutionException ex) {
            // Nothing to do here: the caller looks at every ask and every due time again.
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while committing shuffle " + shuffleId, ex);
        }
    }

    private static boolean listed(List<PartitionLocation> listed, PartitionLocation l) {
        for (PartitionLocation f : listed) {
            if (f.getPartitionId() == l.getPartitionId() && f.getEpoch() == l.getEpoch()) return true;
        }
        return false;
    }

    private CompletableFuture<CommitFilesResponse> ask(int shuffleId, List<PartitionLocation> locs) {
        WorkerAddress w = locs.get(0).getWorker();
        try {
            TransportClient c = connections.client(w.getHost(), w.getRpcPort());
            return ControlClient.askAsync(
                    c,
                    Request.newBuilder()
                            .setCommitFiles(CommitFilesRequest.newBuilder()
                                    .setAppId(appId)
                                    .setShuffleId(shuffleId)
                                    .addAllLocations(locs)),
                    CommitFilesResponse.parser());
        } catch (RemoteException | RuntimeException e) {
            CompletableFuture<CommitFilesResponse> f = new CompletableFuture<>();
            f.completeExceptionally(e);
            return f;
        }
    }

    private static List<PartitionFiles.Builder> files(
            int numPartitions,
            List<PartitionLocation> locations,
            Map<Long, List<PartitionLocation>> committed,
            Map<Long, Long> bytes) {
        List<PartitionFiles.Builder> out = new ArrayList<>(numPartitions);
        for (int p = 0; p < numPartitions; p++)
            out.add(PartitionFiles.newBuilder().setPartitionId(p));
        for (PartitionLocation l : locations) {
            long k = key(l.getPartitionId(), l.getEpoch());
            PartitionFiles.Builder f = out.get(l.getPartitionId());
            List<PartitionLocation> copies = committed.get(k);
            if (copies == null) {
                f.setIncomplete(true);
                continue;
            }
            copies.sort((a, b) -> Integer.compare(
                    a.getRole() == LocationRole.PRIMARY ? 0 : 1, b.getRole() == LocationRole.PRIMARY ? 0 : 1));
            f.addEpochs(EpochFiles.newBuilder()
                    .setEpoch(l.getEpoch())
                    .addAllCopies(copies)
                    .setBytes(bytes.get(k)));
        }
        return out;
    }
}
