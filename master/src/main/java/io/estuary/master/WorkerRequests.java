package io.estuary.master;

import static io.estuary.master.LoggedChanges.after;
import static io.estuary.master.LoggedChanges.command;

import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.RegisterWorkerRequest;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerHeartbeatRequest;
import io.estuary.common.protocol.WorkerHeartbeatResponse;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.WorkerState;
import io.estuary.common.util.ShuffleKey;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.protocol.MasterCommandBatch;
import io.estuary.master.protocol.WorkerDisksChanged;
import io.estuary.master.protocol.WorkerRegistered;
import io.estuary.master.protocol.WorkerStateChanged;
import io.estuary.master.quota.QuotaUsage;
import io.estuary.master.state.LocalStateLog;
import io.estuary.master.state.MasterState;
import io.estuary.master.state.StateLog;
import io.estuary.master.state.WorkerId;
import io.estuary.network.rpc.ControlRpcHandler.Reply;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker-facing requests of {@link MasterRpcHandler}: registration and heartbeats. Keeps the leader's soft facts
 * about workers, not logged: each worker's newest disk report (space, load, used for placement) and the shuffles
 * workers hold that the state does not know (expired after the application timeout). Logs what changes the agreed
 * state: registration, disk status changes, states a worker reports about itself. Only the leader calls this.
 * Thread-safe: request threads call it concurrently; the soft facts are concurrent maps.
 */
final class WorkerRequests {
    private static final Logger LOG = LoggerFactory.getLogger(WorkerRequests.class);

    private final StateLog log;
    private final LivenessTracker workerLiveness;
    private final boolean durableState;
    /** The newest disk report of each worker (space, load): soft facts for placement, not logged. */
    private final Map<String, WorkerInfo> latestReports = new ConcurrentHashMap<>();
    /** Each worker's tags as it reported them to this leader. */
    private final WorkerTags tags = new WorkerTags();
    /** Shuffles workers hold that the state does not know; expired after the application timeout. */
    private final UnknownShuffles unknown;

    /** What each worker holds of each shuffle, for quotas: soft, as the load. */
    private final QuotaUsage usage;

    WorkerRequests(StateLog log, LivenessTracker workerLiveness, long applicationTimeoutMs, QuotaUsage usage) {
        this.usage = usage;
        this.log = log;
        this.workerLiveness = workerLiveness;
        this.durableState = !(log instanceof LocalStateLog);
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
        tags.forget(workerId);
        usage.forget(workerId);
    }

    /** Called when this master gains or loses leadership: the soft facts start afresh. */
    void leadershipChanged() {
        latestReports.clear();
        tags.clear();
        unknown.reset();
        usage.clear();
    }

    /** Registered workers, with the newest disk facts each has reported. */
    /** Each worker's tags, as reported to this leader. */
    WorkerTags tags() {
        return tags;
    }

    List<WorkerInfo> placementView() {
        List<WorkerInfo> out = new ArrayList<>();
        for (WorkerInfo w : log.stateMachine().read(MasterState::activeWorkers)) {
            out.add(latestReports.getOrDefault(WorkerId.of(w.getAddress()), w));
        }
        return out;
    }

    void register(RegisterWorkerRequest r, Reply reply, long now) {
        String id = WorkerId.of(r.getWorker().getAddress());
        latestReports.put(id, r.getWorker());
        tags.report(id, r.getTagsList());
        workerLiveness.touch(id, now);
        LOG.info(
                "Worker {} registered with {} disks ({}){}",
                id,
                r.getWorker().getDisksCount(),
                r.getState(),
                r.getTagsCount() == 0 ? "" : ", tags " + r.getTagsList());
        MasterCommand registered =
                command(c -> c.setWorkerRegistered(WorkerRegistered.newBuilder().setWorker(r.getWorker())));
        MasterCommand change = stateChange(
                r.getWorker().getAddress(), r.getState(), log.stateMachine().read(s -> s.workerState(id)), true);
        after(
                log.submit(
                        change == null
                                ? registered
                                : command(c -> c.setBatch(MasterCommandBatch.newBuilder()
                                        .addCommands(registered)
                                        .addCommands(change)))),
                reply,
                Empty::getDefaultInstance);
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

    void heartbeat(WorkerHeartbeatRequest r, Reply reply, long now) {
        String id = WorkerId.of(r.getWorker().getAddress());
        WorkerInfo known = log.stateMachine().read(s -> s.worker(id));
        if (known == null) {
            reply.ok(WorkerHeartbeatResponse.newBuilder().setRegistered(false).build());
            return;
        }
        workerLiveness.touch(id, now);
        latestReports.put(id, r.getWorker());
        tags.report(id, r.getTagsList());
        usage.report(id, r.getUsageList(), r.getPushRatesList());
        WorkerHeartbeatResponse.Builder resp =
                WorkerHeartbeatResponse.newBuilder().setRegistered(true);
        log.stateMachine().read(s -> {
            java.util.Set<String> removedApps = new java.util.TreeSet<>();
            for (String key : r.getShuffleKeysList()) {
                String app = ShuffleKey.appId(key);
                int shuffle = ShuffleKey.shuffleId(key);
                boolean expired;
                if (s.wasRemoved(app)) removedApps.add(app); // the worker forgets its secret too
                if (s.wasRemoved(app) || s.isShuffleUnregistered(app, shuffle)) {
                    expired = true; // what the log recorded as gone
                } else if (s.isShufflePlaced(app, shuffle) || (s.hasApplication(app) && !durableState)) {
                    // A single master's state does not survive a restart: a live application's shuffles it never heard
                    // of are not garbage. Replicated state always knows every shuffle it placed.
                    expired = false;
                    unknown.known(key);
                } else {
                    // Unknown: forgotten (the records of removals are bounded) or never placed. Expired once reported
                    // so for a whole application timeout on this leader.
                    expired = unknown.reportedUnknown(key, now);
                }
                if (expired) resp.addExpiredShuffleKeys(key);
            }
            resp.addAllRemovedAppIds(removedApps);
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
}
