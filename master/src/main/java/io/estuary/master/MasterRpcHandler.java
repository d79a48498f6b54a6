package io.estuary.master;

import io.estuary.common.protocol.ApplicationRegistered;
import io.estuary.common.protocol.ApplicationRemoved;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.MasterCommand;
import io.estuary.common.protocol.MasterCommandBatch;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.RegisterWorkerRequest;
import io.estuary.common.protocol.ReportWorkerFailuresRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.ReviveSlotsRequest;
import io.estuary.common.protocol.ShuffleUnregistered;
import io.estuary.common.protocol.SlotsAllocated;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerDisksChanged;
import io.estuary.common.protocol.WorkerHeartbeatRequest;
import io.estuary.common.protocol.WorkerHeartbeatResponse;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.WorkerRegistered;
import io.estuary.common.protocol.WorkerState;
import io.estuary.common.protocol.WorkerStateChanged;
import io.estuary.common.status.NotLeader;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.common.util.EstuaryException;
import io.estuary.common.util.ShuffleKey;
import io.estuary.master.admin.MasterMetrics;
import io.estuary.master.slots.SlotAllocator;
import io.estuary.master.state.MasterState;
import io.estuary.master.state.PlacementEntries;
import io.estuary.master.state.StateLog;
import io.estuary.master.state.WorkerId;
import io.estuary.network.rpc.ControlRpcHandler;
import io.netty.channel.Channel;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Answers workers and drivers. Decisions are made here; state changes go through the {@link StateLog}. */
final class MasterRpcHandler extends ControlRpcHandler {
    private static final Logger LOG = LoggerFactory.getLogger(MasterRpcHandler.class);

    private final StateLog log;
    private final SlotPlanner planner;
    private final WorkerFailureTracker failures;
    private final LivenessTracker workerLiveness;
    private final LivenessTracker appLiveness;
    private final long applicationTimeoutMs;
    private final MasterMetrics metrics;
    private final boolean durableState;
    /** The newest disk report of each worker (space, load): soft facts for placement, not logged. */
    private final Map<String, WorkerInfo> latestReports = new ConcurrentHashMap<>();
    /** Tells one placement's log entries from another's; unique across leaders (a clock start, then a count). */
    private final java.util.concurrent.atomic.AtomicLong placementIds =
            new java.util.concurrent.atomic.AtomicLong(System.nanoTime() ^ System.currentTimeMillis() << 20);
    /** Shuffles workers hold that the state does not know; expired after the application timeout. */
    private final UnknownShuffles unknown;
    /** Slot requests being decided, so concurrent retries of one shuffle get the same answer. */
    private final Map<String, CompletableFuture<List<PartitionLocation>>> allocating = new ConcurrentHashMap<>();

    private final io.estuary.common.time.Clock clock;

    MasterRpcHandler(
            StateLog log,
            SlotAllocator allocator,
            LivenessTracker workerLiveness,
            LivenessTracker appLiveness,
            long applicationTimeoutMs,
            MasterMetrics metrics,
            WorkerFailureTracker failures,
            io.estuary.network.rpc.RequestLimits limits,
            io.estuary.common.time.Clock clock) {
        // Each revived partition costs a new location and replica in the answer: a revive holds only what the heap can.
        super(
                "master",
                limits.withListCap(
                        ReviveSlotsRequest.getDescriptor().findFieldByName("partition_ids"),
                        io.estuary.network.rpc.SlotRequestCaps.revivePartitions(
                                Runtime.getRuntime().maxMemory()),
                        io.estuary.network.rpc.SlotRequestCaps.reason(
                                Runtime.getRuntime().maxMemory(), "partition")));
        this.metrics = metrics;
        this.clock = clock;
        this.durableState = !(log instanceof io.estuary.master.state.LocalStateLog);
        this.log = log;
        this.planner = new SlotPlanner(allocator);
        this.failures = failures;
        this.workerLiveness = workerLiveness;
        this.appLiveness = appLiveness;
        this.applicationTimeoutMs = applicationTimeoutMs;
        this.unknown = new UnknownShuffles(applicationTimeoutMs);
    }

    /** Forgets unknown shuffles no worker reported for a while; run periodically. */
    void pruneUnknownShuffles(long nowMs) {
        unknown.prune(nowMs);
    }

    /** The newest report (disks, load) of a worker since this master leads, or null. */
    WorkerInfo latestReport(String workerId) {
        return latestReports.get(workerId);
    }

    /** Forgets the load report of a worker declared lost. */
    void workerLost(String workerId) {
        latestReports.remove(workerId);
    }

    /** Called when this master gains or loses leadership. */
    void leadershipChanged() {
        latestReports.clear();
        unknown.reset();
    }

    @Override
    protected void handle(Channel channel, Request request, Reply reply) {
        if (!log.isLeader()) throw NotLeader.exception(log.leaderEndpoint());
        long now = clock.millis();
        switch (request.getPayloadCase()) {
            case REGISTER_WORKER: {
                RegisterWorkerRequest r = request.getRegisterWorker();
                String id = WorkerId.of(r.getWorker().getAddress());
                latestReports.put(id, r.getWorker());
                workerLiveness.touch(id, now);
                LOG.info(
                        "Worker {} registered with {} disks ({})",
                        id,
                        r.getWorker().getDisksCount(),
                        r.getState());
                MasterCommand registered = command(
                        c -> c.setWorkerRegistered(WorkerRegistered.newBuilder().setWorker(r.getWorker())));
                MasterCommand change = stateChange(
                        r.getWorker().getAddress(),
                        r.getState(),
                        log.stateMachine().read(s -> s.workerState(id)),
                        true);
                after(
                        log.submit(
                                change == null
                                        ? registered
                                        : command(c -> c.setBatch(MasterCommandBatch.newBuilder()
                                                .addCommands(registered)
                                                .addCommands(change)))),
                        reply,
                        Empty::getDefaultInstance);
                break;
            }
            case WORKER_HEARTBEAT:
                workerHeartbeat(request.getWorkerHeartbeat(), reply, now);
                break;
            case APPLICATION_HEARTBEAT: {
                String app = request.getApplicationHeartbeat().getAppId();
                appLiveness.touch(app, now);
                after(ensureApplication(app), reply, Empty::getDefaultInstance);
                break;
            }
            case REQUEST_SLOTS:
                requestSlots(request.getRequestSlots(), reply, now);
                break;
            case REVIVE_SLOTS:
                reviveSlots(request.getReviveSlots(), reply, now);
                break;
            case REPORT_WORKER_FAILURES: {
                ReportWorkerFailuresRequest r = request.getReportWorkerFailures();
                if (r.getAppId().isEmpty())
                    throw new IllegalArgumentException("a worker failure report needs an app_id");
                metrics.workerFailureReport();
                appLiveness.touch(r.getAppId(), now);
                after(
                        failures.report(r.getAppId(), r.getWorkersList(), r.getReason()),
                        reply,
                        Empty::getDefaultInstance);
                break;
            }
            case UNREGISTER_SHUFFLE: {
                String app = request.getUnregisterShuffle().getAppId();
                int shuffle = request.getUnregisterShuffle().getShuffleId();
                after(
                        log.submit(command(c -> c.setShuffleUnregistered(
                                ShuffleUnregistered.newBuilder().setAppId(app).setShuffleId(shuffle)))),
                        reply,
                        Empty::getDefaultInstance);
                break;
            }
            case UNREGISTER_APPLICATION: {
                String app = request.getUnregisterApplication().getAppId();
                appLiveness.forget(app);
                LOG.info("Application {} unregistered", app);
                after(
                        log.submit(command(c -> c.setApplicationRemoved(
                                ApplicationRemoved.newBuilder().setAppId(app)))),
                        reply,
                        Empty::getDefaultInstance);
                break;
            }
            default:
                throw unsupported(request);
        }
    }

    /**
     * How the state a worker reports about itself changes the logged one, or null for no change. An EXCLUDED worker
     * stays excluded (an operator or the failure tracker decided). A worker that says it is DECOMMISSIONING or
     * SHUTTING_DOWN gets that state (no new slots). A worker back from a graceful stop (reports ACTIVE while the log
     * says SHUTTING_DOWN) is ACTIVE again, and so is one that registers afresh after a decommission. An ACTIVE worker
     * that merely heartbeats keeps a DECOMMISSIONING an operator set here: the answer tells it to drain.
     */
    static MasterCommand stateChange(
            WorkerAddress worker, WorkerState reported, WorkerState logged, boolean registering) {
        if (logged == WorkerState.WORKER_EXCLUDED || reported == logged) return null;
        WorkerState next;
        if (reported == WorkerState.WORKER_DECOMMISSIONING || reported == WorkerState.WORKER_SHUTTING_DOWN) {
            next = reported;
        } else if (reported == WorkerState.WORKER_ACTIVE
                && (logged == WorkerState.WORKER_SHUTTING_DOWN
                        || (registering && logged == WorkerState.WORKER_DECOMMISSIONING))) {
            next = WorkerState.WORKER_ACTIVE;
        } else {
            return null;
        }
        LOG.info("Worker {} is now {} (it says so itself)", WorkerId.of(worker), next);
        return command(c -> c.setWorkerStateChanged(
                WorkerStateChanged.newBuilder().setWorker(worker).setState(next).setReason("reported by the worker")));
    }

    private void workerHeartbeat(WorkerHeartbeatRequest r, Reply reply, long now) {
        String id = WorkerId.of(r.getWorker().getAddress());
        WorkerInfo known = log.stateMachine().read(s -> s.worker(id));
        if (known == null) {
            reply.ok(WorkerHeartbeatResponse.newBuilder().setRegistered(false).build());
            return;
        }
        workerLiveness.touch(id, now);
        latestReports.put(id, r.getWorker());
        WorkerHeartbeatResponse.Builder resp =
                WorkerHeartbeatResponse.newBuilder().setRegistered(true);
        log.stateMachine().read(s -> {
            for (String key : r.getShuffleKeysList()) {
                String app = ShuffleKey.appId(key);
                int shuffle = ShuffleKey.shuffleId(key);
                boolean expired;
                if (s.wasRemoved(app) || s.isShuffleUnregistered(app, shuffle)) {
                    expired = true; // what the log recorded as gone
                } else if (s.isShufflePlaced(app, shuffle) || (s.hasApplication(app) && !durableState)) {
                    // A single master's state does not survive a restart: a live application's shuffles it never heard
                    // of
                    // are not garbage. Replicated state always knows every shuffle it placed.
                    expired = false;
                    unknown.known(key);
                } else {
                    // Unknown: forgotten (the records of removals are bounded) or never placed. Expired once reported
                    // so
                    // for a whole application timeout on this leader.
                    expired = unknown.reportedUnknown(key, now);
                }
                if (expired) resp.addExpiredShuffleKeys(key);
            }
            return null;
        });
        CompletableFuture<Void> logged = CompletableFuture.completedFuture(null);
        if (!diskStatuses(known).equals(diskStatuses(r.getWorker()))) {
            LOG.info("Worker {} disks changed: {}", id, diskStatuses(r.getWorker()));
            logged = log.submit(command(c -> c.setWorkerDisksChanged(WorkerDisksChanged.newBuilder()
                    .setWorker(r.getWorker().getAddress())
                    .addAllDisks(r.getWorker().getDisksList()))));
        }
        WorkerState held = log.stateMachine().read(s -> s.workerState(id));
        MasterCommand change = stateChange(r.getWorker().getAddress(), r.getState(), held, false);
        if (change != null) {
            logged = logged.thenCompose(v -> log.submit(change));
            held = change.getWorkerStateChanged().getState();
        }
        resp.setState(held);
        after(logged, reply, resp::build);
    }

    private static List<String> diskStatuses(WorkerInfo w) {
        List<String> out = new ArrayList<>();
        for (DiskInfo d : w.getDisksList()) out.add(d.getMountPoint() + "=" + d.getStatus());
        return out;
    }

    private void requestSlots(RequestSlotsRequest r, Reply reply, long now) {
        if (r.getNumPartitions() <= 0) {
            throw new IllegalArgumentException("shuffle " + r.getShuffleId() + " of " + r.getAppId() + " asks for "
                    + r.getNumPartitions() + " partitions; need at least 1");
        }
        appLiveness.touch(r.getAppId(), now);
        long t0 = System.nanoTime();
        decide(r, 0).whenComplete((locs, e) -> {
            metrics.slotRequest(System.nanoTime() - t0, e != null);
            if (e != null) reply.fail(cause(e));
            else
                reply.ok(RequestSlotsResponse.newBuilder().addAllLocations(locs).build());
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
            CompletableFuture<Void> registered;
            try {
                registered = ensureApplication(r.getAppId());
            } catch (RuntimeException e) {
                registered = new CompletableFuture<>();
                registered.completeExceptionally(e);
            }
            registered.thenCompose(v -> allocate(r)).whenComplete((locs, e) -> {
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
        List<WorkerInfo> usable =
                SlotPlanner.usable(placementView(), SlotPlanner.excludedBy(r.getExcludedWorkersList()));
        List<PartitionLocation> chosen;
        if (existing == null) {
            chosen = planner.placeAll(
                    r.getAppId(),
                    r.getShuffleId(),
                    r.getNumPartitions(),
                    r.getReplicate(),
                    appWorkers(r.getAppId()),
                    usable);
        } else {
            chosen = planner.repair(
                    r.getAppId(), r.getShuffleId(), existing, r.getReplicate(), appWorkers(r.getAppId()), usable);
            if (chosen == existing) return CompletableFuture.completedFuture(existing);
            LOG.info(
                    "Shuffle {} of {}: partitions on lost, inactive or excluded workers placed anew",
                    r.getShuffleId(),
                    r.getAppId());
        }
        return logPlacement(r.getAppId(), r.getShuffleId(), chosen).thenApply(v -> {
            if (log.stateMachine().read(s -> s.shuffle(r.getAppId(), r.getShuffleId())) == null) {
                throw new EstuaryException("application " + r.getAppId() + " expired while shuffle " + r.getShuffleId()
                        + " was being placed; it registers again with its next request");
            }
            return chosen;
        });
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
     * New locations for some partitions of a running shuffle. Not logged: the driver owns the epochs and records
     * every location it hands out; the master only chooses where, from its current view.
     */
    private void reviveSlots(ReviveSlotsRequest r, Reply reply, long now) {
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
        List<WorkerInfo> usable =
                SlotPlanner.usable(placementView(), SlotPlanner.excludedBy(r.getExcludedWorkersList()));
        List<PartitionLocation> locs = planner.place(
                r.getAppId(),
                r.getShuffleId(),
                r.getPartitionIdsList(),
                0,
                r.getReplicate(),
                appWorkers(r.getAppId()),
                usable);
        reply.ok(RequestSlotsResponse.newBuilder().addAllLocations(locs).build());
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

    private static Throwable cause(Throwable e) {
        return e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
    }

    /** Registered workers, with the newest disk facts each has reported. */
    private List<WorkerInfo> placementView() {
        List<WorkerInfo> out = new ArrayList<>();
        for (WorkerInfo w : log.stateMachine().read(MasterState::activeWorkers)) {
            out.add(latestReports.getOrDefault(WorkerId.of(w.getAddress()), w));
        }
        return out;
    }

    private CompletableFuture<Void> ensureApplication(String app) {
        if (log.stateMachine().read(s -> s.hasApplication(app))) return CompletableFuture.completedFuture(null);
        LOG.info("Application {} registered", app);
        return log.submit(command(c ->
                c.setApplicationRegistered(ApplicationRegistered.newBuilder().setAppId(app))));
    }

    private static MasterCommand command(java.util.function.Consumer<MasterCommand.Builder> fill) {
        MasterCommand.Builder b = MasterCommand.newBuilder();
        fill.accept(b);
        return b.build();
    }

    private static void after(
            CompletableFuture<Void> logged, Reply reply, Supplier<com.google.protobuf.MessageLite> answer) {
        logged.whenComplete((v, e) -> {
            if (e == null) {
                reply.ok(answer.get());
            } else if (cause(e) instanceof EstuaryException) {
                reply.fail(cause(e));
            } else {
                reply.fail(
                        io.estuary.common.status.StatusCode.FATAL, "master could not record the change: " + cause(e));
            }
        });
    }
}
