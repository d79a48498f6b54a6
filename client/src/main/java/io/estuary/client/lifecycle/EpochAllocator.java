package io.estuary.client.lifecycle;

import io.estuary.common.protocol.PartitionEpoch;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.ReviveSlotsRequest;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.common.time.Clock;
import io.estuary.common.util.IdRanges;
import io.estuary.network.client.RemoteException;
import io.estuary.network.rpc.MasterClient;
import io.estuary.network.rpc.SlotRequestCaps;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives partitions of running shuffles new epochs: after a failed push (revive) or when a partition file grew past
 * its split size. Requests for one shuffle that arrive while the master is being asked are gathered and sent as the
 * next single request, so a storm of revives over one dead worker costs the master a handful of requests. Each new
 * location is reserved on its workers before anyone is told about it; a worker that refuses is avoided and the
 * partition placed again. Thread-safe.
 */
final class EpochAllocator {
    private static final Logger LOG = LoggerFactory.getLogger(EpochAllocator.class);
    private static final int PLACEMENT_TRIES = 4;
    /**
     * How long a revive waits for a master before the driver places the partitions itself: a writer is waiting, and
     * with no quorum no master will answer however long it waits.
     */
    static final long REVIVE_MASTER_WAIT_MS = 5_000;
    /** After no master answered, revives go straight to the driver's own placement for this long. */
    static final long MASTER_DOWN_MEMORY_MS = 30_000;

    private final String appId;
    /** The application's tag expression (estuary.client.tags, canonical; empty: any worker), sent with each ask. */
    private final String tags;

    private final Clock clock;
    private final MasterClient master;
    private final long masterWaitMs;
    private final SlotReserver reserver;
    private final FailedWorkers failedWorkers;
    private final Consumer<List<WorkerAddress>> reportFailures;
    private final boolean replicate;
    private final ExecutorService work;
    private final Map<Integer, Batch> pending = new HashMap<>();
    private final Set<Integer> running = new HashSet<>();
    private final AtomicLong masterRequests = new AtomicLong();
    private final AtomicLong reviveRequests = new AtomicLong();
    private final AtomicLong driverPlacements = new AtomicLong();
    /** Until when revives skip the masters (none answered recently). */
    private volatile long mastersDownUntilMs;

    /** Partitions of one shuffle waiting for the next master request, with workers to avoid for splits. */
    private static final class Batch {
        final ShuffleState shuffle;
        final EpochTable table;
        final Map<Integer, Set<String>> partitions = new LinkedHashMap<>();

        Batch(ShuffleState shuffle, EpochTable table) {
            this.shuffle = shuffle;
            this.table = table;
        }

        /** This batch as batches of at most {@code max} partitions each, in order. */
        List<Batch> split(int max) {
            if (partitions.size() <= max) return java.util.Collections.singletonList(this);
            List<Batch> out = new ArrayList<>();
            Batch cur = null;
            for (Map.Entry<Integer, Set<String>> e : partitions.entrySet()) {
                if (cur == null || cur.partitions.size() == max) out.add(cur = new Batch(shuffle, table));
                cur.partitions.put(e.getKey(), e.getValue());
            }
            return out;
        }
    }

    EpochAllocator(
            String appId,
            MasterClient master,
            long masterWaitMs,
            SlotReserver reserver,
            FailedWorkers failedWorkers,
            Consumer<List<WorkerAddress>> reportFailures,
            boolean replicate,
            ExecutorService drains,
            Clock clock,
            String tags) {
        this.tags = tags;
        this.appId = appId;
        this.clock = clock;
        this.master = master;
        this.masterWaitMs = masterWaitMs;
        this.reserver = reserver;
        this.failedWorkers = failedWorkers;
        this.reportFailures = reportFailures;
        this.replicate = replicate;
        this.work = drains;
    }

    /** Revive requests answered (from executors), and master requests they cost. */
    long reviveRequests() {
        return reviveRequests.get();
    }

    long masterRequests() {
        return masterRequests.get();
    }

    /** Partitions placed by the driver itself because no master answered. */
    long driverPlacements() {
        return driverPlacements.get();
    }

    /**
     * The newest location of each partition after its location at the given epoch failed (or, with {@code split},
     * grew too big), in request order. A partition already past that epoch is answered at once.
     */
    CompletableFuture<List<PartitionLocation>> revive(
            ShuffleState s, EpochTable table, List<PartitionEpoch> parts, List<WorkerAddress> failed, boolean split) {
        reviveRequests.incrementAndGet();
        if (s.commitStarted()) {
            CompletableFuture<List<PartitionLocation>> f = new CompletableFuture<>();
            f.completeExceptionally(new StatusException(
                    StatusCode.STAGE_ENDED,
                    s + " is already committed: its " + "map stage ended, so this attempt's output is not needed"));
            return f;
        }
        if (!failed.isEmpty()) {
            List<WorkerAddress> fresh = failedWorkers.add(failed);
            if (!fresh.isEmpty()) reportFailures.accept(fresh);
        }
        List<CompletableFuture<PartitionLocation>> answers = new ArrayList<>();
        for (PartitionEpoch pe : parts) {
            if (pe.getPartitionId() < 0 || pe.getPartitionId() >= s.numPartitions) {
                throw new IllegalArgumentException(s + " has " + s.numPartitions + " partitions; partition "
                        + pe.getPartitionId() + " does not exist");
            }
            EpochTable.Claim c = table.claim(pe.getPartitionId(), pe.getEpoch());
            if (c.mustAllocate) {
                Set<String> avoid = new HashSet<>();
                if (split) { // a split moves on to another worker when there is one
                    PartitionLocation cur = table.current(pe.getPartitionId());
                    avoid.add(WorkerCalls.id(cur.getWorker()));
                    if (cur.hasPeer()) avoid.add(WorkerCalls.id(cur.getPeer().getWorker()));
                }
                enqueue(s, table, pe.getPartitionId(), avoid);
            }
            answers.add(c.location);
        }
        return CompletableFuture.allOf(answers.toArray(new CompletableFuture[0]))
                .thenApply(v -> {
                    List<PartitionLocation> out = new ArrayList<>(answers.size());
                    for (CompletableFuture<PartitionLocation> a : answers) out.add(a.join());
                    return out;
                });
    }

    private void enqueue(ShuffleState s, EpochTable table, int partition, Set<String> avoid) {
        synchronized (pending) {
            pending.computeIfAbsent(s.shuffleId, k -> new Batch(s, table))
                    .partitions
                    .put(partition, avoid);
            if (running.add(s.shuffleId)) work.execute(() -> drain(s.shuffleId));
        }
    }

    /** Sends the shuffle's gathered partitions to the master, one request at a time, until none are left. */
    private void drain(int shuffleId) {
        while (true) {
            Batch b;
            synchronized (pending) {
                b = pending.remove(shuffleId);
                if (b == null) {
                    running.remove(shuffleId);
                    return;
                }
            }
            // The master takes at most so many partitions per request (each becomes a location in its answer).
            for (Batch part : b.split(SlotRequestCaps.PER_REQUEST)) {
                try {
                    place(part);
                } catch (RuntimeException e) {
                    for (int p : part.partitions.keySet()) part.table.abandon(p, e);
                }
            }
        }
    }

    private void place(Batch b) {
        Map<Integer, Set<String>> left = new LinkedHashMap<>(b.partitions);
        RuntimeException last = null;
        boolean trustMasterOnly = false;
        for (int attempt = 0; attempt < PLACEMENT_TRIES && !left.isEmpty(); attempt++) {
            List<Integer> parts = new ArrayList<>(left.keySet());
            // First avoid what this application saw fail (and, for a split, the old workers); if that leaves nothing,
            // the master's own view of live workers decides, and reservations weed out the dead.
            Set<String> excluded = new HashSet<>(trustMasterOnly ? new ArrayList<>() : failedWorkers.ids());
            if (attempt == 0) for (Set<String> avoid : left.values()) excluded.addAll(avoid);
            List<PartitionLocation> raw;
            try {
                raw = placement(b, parts, excluded, attempt);
            } catch (RemoteException | RuntimeException e) {
                LOG.warn(
                        "No new locations for partitions {} of {} (avoiding {}): {}",
                        IdRanges.describe(parts),
                        b.shuffle,
                        excluded,
                        e.toString());
                trustMasterOnly = attempt > 0;
                last = new StatusException(
                        StatusCode.RETRY_LATER,
                        "no new location for partitions " + IdRanges.describe(parts) + " of " + b.shuffle + ": "
                                + e.getMessage(),
                        e);
                continue; // a split that excluded every worker tries again anywhere
            }
            List<PartitionLocation> locs = new ArrayList<>();
            for (int i = 0; i < parts.size(); i++) {
                locs.add(EpochTable.withEpoch(
                        raw.get(i).toBuilder().setPartitionId(parts.get(i)).build(), b.table.nextEpoch(parts.get(i))));
            }
            Map<WorkerAddress, String> refused = reserver.reserve(b.shuffle.shuffleId, locs);
            if (!refused.isEmpty()) {
                LOG.warn("Reserving new epochs of {} failed on {}; placing them elsewhere", b.shuffle, refused);
                List<WorkerAddress> fresh = failedWorkers.add(refused.keySet());
                if (!fresh.isEmpty()) reportFailures.accept(fresh);
                trustMasterOnly = false; // these refusals are facts: avoid them next time
            }
            for (PartitionLocation loc : locs) {
                if (onAny(loc, refused.keySet())) continue;
                b.table.install(loc.getPartitionId(), loc);
                left.remove(loc.getPartitionId());
            }
            if (!left.isEmpty()) {
                last = new StatusException(
                        StatusCode.RETRY_LATER, "workers " + refused.keySet() + " refused new epochs of " + b.shuffle);
            }
        }
        for (int p : left.keySet()) b.table.abandon(p, last);
    }

    /**
     * Where the partitions go: the master's choice, or, when no master answers (no quorum), the driver's own among
     * the shuffle's workers ({@link DriverPlacement}). A master that answers with a refusal is obeyed.
     */
    private List<PartitionLocation> placement(Batch b, List<Integer> parts, Set<String> excluded, int attempt)
            throws RemoteException {
        if (clock.millis() >= mastersDownUntilMs) {
            try {
                masterRequests.incrementAndGet();
                RequestSlotsResponse r = master.ask(
                        Request.newBuilder()
                                .setReviveSlots(ReviveSlotsRequest.newBuilder()
                                        .setAppId(appId)
                                        .setShuffleId(b.shuffle.shuffleId)
                                        .addAllPartitionIds(parts)
                                        .setReplicate(replicate)
                                        .addAllExcludedWorkers(excluded)
                                        .setTags(tags)),
                        RequestSlotsResponse.parser(),
                        Math.min(masterWaitMs, REVIVE_MASTER_WAIT_MS));
                reserver.sealsFrom(r);
                return r.getLocationsList();
            } catch (RemoteException e) {
                if (!noMasterAnswers(e)) throw e;
                mastersDownUntilMs = clock.millis() + MASTER_DOWN_MEMORY_MS;
                LOG.warn(
                        "No master answers ({}); {} places partitions {} of {} itself, on the shuffle's own workers, "
                                + "until one does",
                        e.getMessage(),
                        appId,
                        IdRanges.describe(parts),
                        b.shuffle);
            }
        }
        List<PartitionLocation> locs = DriverPlacement.place(
                parts, b.table.currentAll(), excluded, replicate, attempt + (int) driverPlacements.get());
        driverPlacements.addAndGet(parts.size());
        return locs;
    }

    /** Whether the failure means no master could answer (none reachable, or none leading), not a refusal. */
    static boolean noMasterAnswers(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof RemoteException) {
                RemoteException r = (RemoteException) t;
                if (r.status() == StatusCode.NOT_LEADER || r.isConnectionFailure()) return true;
            }
            if (t.getCause() == t) break;
        }
        return false;
    }

    private static boolean onAny(PartitionLocation loc, Set<WorkerAddress> workers) {
        return workers.contains(loc.getWorker())
                || (loc.hasPeer() && workers.contains(loc.getPeer().getWorker()));
    }
}
