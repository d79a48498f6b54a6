package io.estuary.master;

import static io.estuary.master.LoggedChanges.after;
import static io.estuary.master.LoggedChanges.cause;
import static io.estuary.master.LoggedChanges.command;

import com.google.protobuf.ByteString;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.LeaseSlotsRequest;
import io.estuary.common.protocol.LeaseSlotsResponse;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.RecordPlacementRequest;
import io.estuary.common.protocol.ReportWorkerFailuresRequest;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.ReviveSlotsRequest;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.common.util.EstuaryException;
import io.estuary.master.admin.MasterMetrics;
import io.estuary.master.protocol.ApplicationRemoved;
import io.estuary.master.protocol.ShuffleUnregistered;
import io.estuary.master.protocol.SlotsAllocated;
import io.estuary.master.quota.Admission;
import io.estuary.master.quota.QuotaSpec;
import io.estuary.master.state.PlacementEntries;
import io.estuary.master.state.StateLog;
import io.estuary.master.state.WorkerId;
import io.estuary.network.auth.Identity;
import io.estuary.network.rpc.ControlRpcHandler.Reply;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The application-facing requests of {@link MasterRpcHandler}, beside registrations and heartbeats ({@link
 * ApplicationRegistrations}): slot requests and revives, worker failure reports, unregistering shuffles and
 * applications. A shuffle's placement is decided once and logged (concurrent
 * retries of one shuffle share the decision), by this master or by the driver under a slot lease ({@link #leaseSlots},
 * {@link #recordPlacement}: the first one logged stays); revived slots are chosen from the current view and not logged (the
 * driver owns the epochs). Placement sees workers through {@link WorkerRequests#placementView()}. Only the leader
 * calls this. Thread-safe: request threads call it concurrently; decisions under way are a concurrent map.
 */
final class ApplicationRequests {
    private static final Logger LOG = LoggerFactory.getLogger(ApplicationRequests.class);

    private final StateLog log;
    private final SlotPlanner planner;
    private final WorkerRequests workers;
    private final WorkerFailureTracker failures;
    private final LivenessTracker appLiveness;
    private final MasterMetrics metrics;
    private final ApplicationSecrets secrets;
    private final ApplicationRegistrations registrations;
    /** The workers each placement may use (tags, defaults, exclusions). */
    private final PlacementCandidates candidates;

    /** Whether a new shuffle fits its user's, tenant's and the cluster's quotas. */
    private final Admission admission;

    /** How long a slot lease lets a driver place shuffles itself; 0: no leases. */
    private final long leaseMs;
    /** Tells one placement's log entries from another's; unique across leaders (a clock start, then a count). */
    private final AtomicLong placementIds = new AtomicLong(System.nanoTime() ^ System.currentTimeMillis() << 20);
    /** Slot requests being decided, so concurrent retries of one shuffle get the same answer. */
    private final Map<String, CompletableFuture<List<PartitionLocation>>> allocating = new ConcurrentHashMap<>();

    ApplicationRequests(
            StateLog log,
            SlotPlanner planner,
            WorkerRequests workers,
            WorkerFailureTracker failures,
            LivenessTracker appLiveness,
            MasterMetrics metrics,
            ApplicationSecrets secrets,
            ApplicationRegistrations registrations,
            long leaseMs,
            Admission admission) {
        this.admission = admission;
        this.candidates = new PlacementCandidates(log, workers, registrations);
        this.secrets = secrets;
        this.registrations = registrations;
        this.leaseMs = leaseMs;
        this.log = log;
        this.planner = planner;
        this.workers = workers;
        this.failures = failures;
        this.appLiveness = appLiveness;
        this.metrics = metrics;
    }

    void reportWorkerFailures(ReportWorkerFailuresRequest r, Reply reply, long now) {
        if (r.getAppId().isEmpty()) throw new IllegalArgumentException("a worker failure report needs an app_id");
        metrics.workerFailureReport();
        appLiveness.touch(r.getAppId(), now);
        after(failures.report(r.getAppId(), r.getWorkersList(), r.getReason()), reply, Empty::getDefaultInstance);
    }

    void unregisterShuffle(String app, int shuffle, Reply reply) {
        after(
                log.submit(command(c -> c.setShuffleUnregistered(
                        ShuffleUnregistered.newBuilder().setAppId(app).setShuffleId(shuffle)))),
                reply,
                Empty::getDefaultInstance);
    }

    void unregisterApplication(String app, Reply reply) {
        appLiveness.forget(app);
        registrations.forget(app);
        admission.enforcer().forget(app);
        LOG.info("Application {} unregistered", app);
        after(
                log.submit(command(c ->
                        c.setApplicationRemoved(ApplicationRemoved.newBuilder().setAppId(app)))),
                reply,
                Empty::getDefaultInstance);
    }

    /**
     * Answered with the slots, for the driver to hand to the workers it reserves on: the application's secret and
     * principal sealed for workers, when {@code who} is the application ({@link ApplicationSecrets#sealedForReservations},
     * {@link ApplicationRegistrations#sealedPrincipal}).
     */
    void requestSlots(RequestSlotsRequest r, Reply reply, long now, Identity who) {
        if (r.getNumPartitions() <= 0) {
            throw new IllegalArgumentException("shuffle " + r.getShuffleId() + " of " + r.getAppId() + " asks for "
                    + r.getNumPartitions() + " partitions; need at least 1");
        }
        appLiveness.touch(r.getAppId(), now);
        ByteString sealedSecret = secrets.sealedForReservations(r.getAppId(), who);
        ByteString sealedPrincipal = registrations.sealedPrincipal(r.getAppId(), who);
        long t0 = System.nanoTime();
        decide(r, 0).whenComplete((locs, e) -> {
            // Told to wait or refused under a quota is the quota's count (estuary_master_quota_refusals_total), not a
            // failure.
            metrics.slotRequest(System.nanoTime() - t0, e != null && !Admission.isQuotaAnswer(cause(e)));
            if (e != null) reply.fail(cause(e));
            else
                reply.ok(RequestSlotsResponse.newBuilder()
                        .addAllLocations(locs)
                        .setSealedSecret(sealedSecret)
                        .setSealedPrincipal(sealedPrincipal)
                        .build());
        });
    }

    /**
     * One decision per shuffle at a time, so concurrent retries get the same answer. A caller that joins another's
     * decision but excluded a worker it uses decides again once that one is done.
     */
    private CompletableFuture<List<PartitionLocation>> decide(RequestSlotsRequest r, int round) {
        String key = r.getAppId() + "/" + r.getShuffleId();
        CompletableFuture<List<PartitionLocation>> mine = new CompletableFuture<>();
        CompletableFuture<List<PartitionLocation>> f = allocating.putIfAbsent(key, mine);
        if (f == null) {
            registrations.registered(r.getAppId()).thenCompose(v -> allocate(r)).whenComplete((locs, e) -> {
                allocating.remove(key, mine);
                if (e != null) mine.completeExceptionally(e);
                else mine.complete(locs);
            });
            return mine;
        }
        Predicate<WorkerAddress> excluded = SlotPlanner.excludedBy(r.getExcludedWorkersList());
        return f.thenCompose(locs -> {
            if (!SlotPlanner.touches(locs, excluded)) return CompletableFuture.completedFuture(locs);
            if (round >= 10) {
                throw new StatusException(
                        StatusCode.RETRY_LATER,
                        "shuffle " + r.getShuffleId() + " of " + r.getAppId()
                                + " is being placed by many concurrent requests; try again");
            }
            return decide(r, round + 1);
        });
    }

    /**
     * The shuffle's locations: a new placement, or the logged one; either way with no copy on a worker that is lost,
     * not ACTIVE or excluded by the caller. A logged placement that had such copies is repaired and logged again.
     */
    private CompletableFuture<List<PartitionLocation>> allocate(RequestSlotsRequest r) {
        List<PartitionLocation> existing = log.stateMachine().read(s -> s.shuffle(r.getAppId(), r.getShuffleId()));
        if (existing != null && existing.size() != r.getNumPartitions()) {
            throw new EstuaryException("shuffle " + r.getShuffleId() + " of " + r.getAppId() + " already has "
                    + existing.size() + " partitions, not " + r.getNumPartitions());
        }
        List<WorkerInfo> usable = candidates.of(r.getAppId(), r.getExcludedWorkersList(), r.getTags());
        List<PartitionLocation> chosen;
        if (existing == null) {
            admit(r);
            try {
                chosen = planner.placeAll(
                        r.getAppId(),
                        r.getShuffleId(),
                        r.getNumPartitions(),
                        r.getReplicate(),
                        appWorkers(r.getAppId()),
                        usable);
            } catch (RuntimeException e) {
                admission.placed(r.getAppId(), r.getShuffleId()); // admitted, but never placed
                throw e;
            }
        } else {
            chosen = planner.repair(
                    r.getAppId(), r.getShuffleId(), existing, r.getReplicate(), appWorkers(r.getAppId()), usable);
            if (chosen == existing) return CompletableFuture.completedFuture(existing);
            LOG.info(
                    "Shuffle {} of {}: partitions on lost, inactive or excluded workers placed anew",
                    r.getShuffleId(),
                    r.getAppId());
        }
        return logPlacement(r.getAppId(), r.getShuffleId(), chosen)
                .whenComplete((v, e) -> {
                    if (existing == null) admission.placed(r.getAppId(), r.getShuffleId());
                })
                .thenApply(v -> {
                    if (log.stateMachine().read(s -> s.shuffle(r.getAppId(), r.getShuffleId())) == null) {
                        throw new EstuaryException("application " + r.getAppId() + " expired while shuffle "
                                + r.getShuffleId() + " was being placed; it registers again with its next request");
                    }
                    return chosen;
                });
    }

    /**
     * Admits a new shuffle under its quotas ({@link Admission}), or throws the refusal (QUOTA_EXCEEDED) or the wait
     * (ADMISSION_WAIT) naming the quota, its limit and what is in use.
     */
    private void admit(RequestSlotsRequest r) {
        long copies = (long) r.getNumPartitions() * (r.getReplicate() ? 2 : 1);
        Admission.Refusal no = log.stateMachine()
                .read(s -> admission.admit(
                        s,
                        r.getAppId(),
                        r.getShuffleId(),
                        copies,
                        r.getAdmissionWaitedMs(),
                        r.getCanWait(),
                        registrations::principalOf));
        if (no == null) return;
        boolean waiting = no.status.status() == StatusCode.ADMISSION_WAIT;
        metrics.quotaRefused(QuotaSpec.label(no.quota.getScope()), no.quota.getName(), no.limit, waiting);
        if (!waiting) LOG.info("Refused: {}", no.status.getMessage());
        throw no.status;
    }

    /** Logs a placement, in as many entries as its size needs, each after the previous one committed. */
    private CompletableFuture<Void> logPlacement(String app, int shuffleId, List<PartitionLocation> chosen) {
        CompletableFuture<Void> done = CompletableFuture.completedFuture(null);
        long placementId = placementIds.incrementAndGet();
        for (SlotsAllocated part :
                PlacementEntries.split(app, shuffleId, chosen, PlacementEntries.MAX_ENTRY_BYTES, placementId)) {
            done = done.thenCompose(v -> log.submit(command(c -> c.setSlotsAllocated(part))));
        }
        return done;
    }

    /**
     * A slot lease: a placement pattern chosen as for a shuffle of {@link SlotPlanner#leaseSize} partitions, which the driver
     * places its next shuffles by for the lease's time. Refused (BAD_REQUEST) when leases are off.
     */
    void leaseSlots(LeaseSlotsRequest r, Reply reply, long now, Identity who) {
        if (leaseMs <= 0) throw new IllegalArgumentException("slot leases are off on this master (leaseDuration 0)");
        appLiveness.touch(r.getAppId(), now);
        ByteString sealedSecret = secrets.sealedForReservations(r.getAppId(), who);
        ByteString sealedPrincipal = registrations.sealedPrincipal(r.getAppId(), who);
        List<WorkerInfo> usable = candidates.of(r.getAppId(), r.getExcludedWorkersList(), r.getTags());
        if (underQuota(r.getAppId())) {
            // Every new shuffle of it is admitted by this master: no lease, and none asked for its duration.
            reply.ok(LeaseSlotsResponse.newBuilder().setValidMs(leaseMs).build());
            return;
        }
        registrations
                .ensureApplication(r.getAppId())
                .thenApply(v -> planner.placeAll(
                        r.getAppId(),
                        0,
                        SlotPlanner.leaseSize(usable.size(), r.getReplicate()),
                        r.getReplicate(),
                        appWorkers(r.getAppId()),
                        usable))
                .whenComplete((pattern, e) -> {
                    if (e != null) {
                        reply.fail(cause(e));
                        return;
                    }
                    metrics.slotLease();
                    reply.ok(LeaseSlotsResponse.newBuilder()
                            .addAllPattern(pattern)
                            .setValidMs(leaseMs)
                            .setSealedSecret(sealedSecret)
                            .setSealedPrincipal(sealedPrincipal)
                            .build());
                });
    }

    /** Logs a placement made under a lease as if this master made it; a shuffle placed already keeps its first one. */
    void recordPlacement(RecordPlacementRequest r, Reply reply, long now) {
        List<PartitionLocation> locs = r.getLocationsList();
        for (int i = 0; i < locs.size(); i++) {
            PartitionLocation l = locs.get(i);
            if (l.getPartitionId() != i || l.getEpoch() != 0 || !l.hasWorker()) {
                throw new IllegalArgumentException("placement of shuffle " + r.getShuffleId() + " of " + r.getAppId()
                        + ": location " + i + " is partition " + l.getPartitionId() + " epoch " + l.getEpoch()
                        + (l.hasWorker() ? "" : " with no worker") + "; want partitions 0..n-1 in order, at epoch 0");
            }
        }
        if (locs.isEmpty()) throw new IllegalArgumentException("a placement needs at least one location");
        appLiveness.touch(r.getAppId(), now);
        metrics.placementRecorded();
        after(record(r.getAppId(), r.getShuffleId(), locs), reply, Empty::getDefaultInstance);
    }

    /** Logs {@code locs} unless the shuffle is placed (or being placed: then after that decision). */
    private CompletableFuture<Void> record(String app, int shuffle, List<PartitionLocation> locs) {
        String key = app + "/" + shuffle;
        CompletableFuture<List<PartitionLocation>> mine = new CompletableFuture<>();
        CompletableFuture<List<PartitionLocation>> f = allocating.putIfAbsent(key, mine);
        if (f != null) return f.handle((x, e) -> null).thenCompose(x -> record(app, shuffle, locs));
        registrations
                .registered(app)
                .thenCompose(v -> {
                    List<PartitionLocation> known = log.stateMachine()
                            .read(s -> s.isShuffleUnregistered(app, shuffle) ? locs : s.shuffle(app, shuffle));
                    if (known != null) return CompletableFuture.completedFuture(known); // placed, or gone already
                    return logPlacement(app, shuffle, locs).thenApply(x -> locs);
                })
                .whenComplete((placed, e) -> {
                    allocating.remove(key, mine);
                    if (e != null) mine.completeExceptionally(e);
                    else mine.complete(placed);
                });
        return mine.thenApply(placed -> null);
    }

    /**
     * New locations for some partitions of a running shuffle. Not logged: the driver owns the epochs and records
     * every location it hands out; the master only chooses where, from its current view.
     */
    void reviveSlots(ReviveSlotsRequest r, Reply reply, long now, Identity who) {
        metrics.reviveSlotRequest();
        for (int id : r.getPartitionIdsList()) {
            if (id < 0)
                throw new IllegalArgumentException(
                        "revive of shuffle " + r.getShuffleId() + " of " + r.getAppId() + " names partition " + id);
        }
        if (r.getPartitionIdsCount() == 0) {
            reply.ok(RequestSlotsResponse.getDefaultInstance());
            return;
        }
        appLiveness.touch(r.getAppId(), now);
        List<WorkerInfo> usable = candidates.of(r.getAppId(), r.getExcludedWorkersList(), r.getTags());
        List<PartitionLocation> locs = planner.place(
                r.getAppId(),
                r.getShuffleId(),
                r.getPartitionIdsList(),
                0,
                r.getReplicate(),
                appWorkers(r.getAppId()),
                usable);
        reply.ok(RequestSlotsResponse.newBuilder()
                .addAllLocations(locs)
                .setSealedSecret(secrets.sealedForReservations(r.getAppId(), who))
                .setSealedPrincipal(registrations.sealedPrincipal(r.getAppId(), who))
                .build());
    }

    /** Whether a quota limits the application (then its shuffles are placed here, one admission each). */
    private boolean underQuota(String app) {
        return log.stateMachine()
                .read(s -> !admission
                        .book()
                        .applicable(s, registrations.principalOf(app))
                        .isEmpty());
    }

    /** WorkerIds holding the application's shuffles, so its placements stay within maxWorkersPerApplication. */
    private Set<String> appWorkers(String app) {
        return log.stateMachine().read(s -> {
            Set<String> ids = new HashSet<>();
            for (List<PartitionLocation> locs : s.shuffles(app).values()) {
                for (PartitionLocation l : locs) ids.add(WorkerId.of(l.getWorker()));
            }
            return ids;
        });
    }
}
