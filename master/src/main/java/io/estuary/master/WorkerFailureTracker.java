package io.estuary.master;

import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.WorkerState;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.protocol.WorkerStateChanged;
import io.estuary.master.state.MasterState;
import io.estuary.master.state.StateLog;
import io.estuary.master.state.WorkerId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes a worker out of placement for a while when enough distinct applications report it failing, and back in
 * afterwards. A worker that is dead is declared lost by the heartbeat timeout anyway; this catches workers that
 * heartbeat but fail their clients (a bad NIC, a stuck disk), and does so sooner.
 *
 * <p>Reports alone exclude at most {@code maxExcludedFraction} of the registered workers (at least one): when
 * applications report many workers at once the fault is more likely between them (a switch, the applications' own
 * network) than in the workers, and excluding them all would leave every new shuffle without slots. Past that cap a
 * reported worker is excluded only when its own heartbeats corroborate the reports ({@link OwnEvidence}). Whatever
 * the evidence, an exclusion never leaves fewer than {@link #MIN_SERVING} workers that can take new slots.
 *
 * <p>Only exclusions made here are lifted here. Which ones those are is recorded in the log, as the reason's
 * {@link #REASON_PREFIX}: an operator who excludes or decommissions the worker meanwhile replaces the reason, so
 * their decision stands, and a new leader lifts its predecessor's automatic exclusions (after a full grace of its
 * own, since the start time is not logged). Reports themselves are soft facts of the leader: a new one counts
 * afresh. Only the leader calls this. Thread-safe: every method holds this object's lock (request threads report,
 * the liveness timer re-admits).
 */
final class WorkerFailureTracker {
    private static final Logger LOG = LoggerFactory.getLogger(WorkerFailureTracker.class);
    static final String REASON_PREFIX = "reported failing by ";
    private static final int MAX_REASON_CHARS = 300;
    /** Workers that must stay able to take new slots: a replicated shuffle needs two. */
    static final int MIN_SERVING = 2;

    /** What a worker's own heartbeats say about it; called under this tracker's lock, must not block. */
    interface OwnEvidence {
        OwnEvidence NONE = id -> false;

        /** Whether the worker's heartbeats show trouble too (late, or a disk not healthy). */
        boolean troubled(String workerId);
    }

    private final StateLog log;
    private final int threshold;
    private final long windowMs;
    private final long graceMs;
    private final LongSupplier clock;
    private final double maxExcludedFraction;
    private final OwnEvidence evidence;
    /** Worker id to (application to the time of its latest report), within the window. */
    private final Map<String, Map<String, Long>> reports = new HashMap<>();
    /** Automatic exclusions, by worker id, to when they began (or when this leader first saw them). */
    private final Map<String, Long> excludedSince = new HashMap<>();
    /** Exclusions logged but not committed yet: they count against the cap and the floor already. */
    private final Set<String> pendingExclusions = new HashSet<>();

    WorkerFailureTracker(
            StateLog log,
            int threshold,
            long windowMs,
            long graceMs,
            double maxExcludedFraction,
            OwnEvidence evidence,
            LongSupplier clock) {
        this.log = log;
        this.maxExcludedFraction = maxExcludedFraction;
        this.evidence = evidence;
        this.threshold = threshold;
        this.windowMs = windowMs;
        this.graceMs = graceMs;
        this.clock = clock;
    }

    /**
     * Counts one application's report about some workers; excludes those that reach the threshold, within the cap
     * and the floor (see the class doc). Completes when the exclusions are committed. Workers the master does not
     * know, or that are not ACTIVE, are ignored.
     */
    synchronized CompletableFuture<Void> report(String appId, List<WorkerAddress> workers, String reason) {
        long now = clock.getAsLong();
        List<CompletableFuture<Void>> logged = new ArrayList<>();
        for (WorkerAddress a : workers) {
            String id = WorkerId.of(a);
            WorkerInfo known =
                    log.stateMachine().read(s -> s.workerState(id) == WorkerState.WORKER_ACTIVE ? s.worker(id) : null);
            // A pending exclusion is not committed yet: do not log it twice.
            if (known == null || excludedSince.containsKey(id)) continue;
            Map<String, Long> byApp = reports.computeIfAbsent(id, k -> new HashMap<>());
            byApp.put(appId, now);
            prune(byApp, now);
            if (byApp.size() < threshold) continue;
            boolean troubled = evidence.troubled(id);
            String refusal = refusal(id, troubled);
            if (refusal != null) {
                // Kept in the reports: the worker is excluded once the cap or the floor allows it (and reports
                // continue).
                LOG.warn(
                        "Worker {} reported failing by {} applications is not excluded: {}", id, byApp.size(), refusal);
                continue;
            }
            String why = REASON_PREFIX + byApp.size() + " applications" + (troubled ? " and its own heartbeats" : "")
                    + ": " + shorten(reason);
            reports.remove(id);
            excludedSince.put(id, now);
            LOG.warn("Worker {} excluded from placement for {} ms: {}", id, graceMs, why);
            pendingExclusions.add(id);
            logged.add(log.submit(stateChange(known.getAddress(), WorkerState.WORKER_EXCLUDED, why))
                    .whenComplete((v, e) -> committed(id)));
        }
        return CompletableFuture.allOf(logged.toArray(new CompletableFuture<?>[0]));
    }

    private synchronized void committed(String id) {
        pendingExclusions.remove(id);
    }

    /** Why excluding the worker now would break the cap or the floor; null when it may be excluded. */
    private String refusal(String id, boolean troubled) {
        int[] counts = log.stateMachine().read(s -> {
            int registered = 0;
            int serving = 0;
            int automatic = 0;
            for (WorkerInfo w : s.workers()) {
                String wid = WorkerId.of(w.getAddress());
                registered++;
                WorkerState st = s.workerState(wid);
                boolean pending = pendingExclusions.contains(wid);
                if (st == WorkerState.WORKER_ACTIVE && !pending && hasHealthyDisk(w)) serving++;
                if (pending
                        || (st == WorkerState.WORKER_EXCLUDED
                                && s.workerStateReason(wid).startsWith(REASON_PREFIX))) {
                    automatic++;
                }
            }
            return new int[] {registered, serving, automatic};
        });
        if (counts[1] - 1 < MIN_SERVING) {
            return "it would leave fewer than " + MIN_SERVING + " workers that can take new slots";
        }
        int cap = Math.max(1, (int) Math.floor(maxExcludedFraction * counts[0]));
        if (!troubled && counts[2] >= cap) {
            return counts[2] + " workers are excluded on reports already, the most "
                    + "estuary.master.workerFailure.maxExcludedFraction allows of " + counts[0]
                    + ", and its own heartbeats "
                    + "are healthy";
        }
        return null;
    }

    private static boolean hasHealthyDisk(WorkerInfo w) {
        for (io.estuary.common.protocol.DiskInfo d : w.getDisksList()) {
            if (d.getStatus() == io.estuary.common.protocol.DiskStatus.DISK_HEALTHY) return true;
        }
        return false;
    }

    /**
     * The changes that take back automatically excluded workers whose grace is over; the caller logs them. Also drops
     * reports that fell out of the window. Run periodically by the leader.
     */
    synchronized List<MasterCommand> readmissions() {
        long now = clock.getAsLong();
        reports.values().removeIf(byApp -> {
            prune(byApp, now);
            return byApp.isEmpty();
        });
        Map<String, WorkerAddress> automatic = log.stateMachine().read(WorkerFailureTracker::automaticExclusions);
        // Forget what an operator re-decided, what was lifted, and workers that are gone.
        excludedSince.keySet().retainAll(automatic.keySet());
        List<MasterCommand> out = new ArrayList<>();
        for (Map.Entry<String, WorkerAddress> e : automatic.entrySet()) {
            long since = excludedSince.computeIfAbsent(e.getKey(), k -> now);
            if (now - since < graceMs) continue;
            // Kept in excludedSince until the state shows it ACTIVE; re-sending ACTIVE meanwhile is harmless.
            LOG.info(
                    "Worker {} back in placement: its exclusion for failure reports lasted {} ms",
                    e.getKey(),
                    now - since);
            out.add(stateChange(
                    e.getValue(),
                    WorkerState.WORKER_ACTIVE,
                    "exclusion for failure reports over after " + graceMs + " ms"));
        }
        return out;
    }

    /** A new leader (or a deposed one) starts afresh. */
    synchronized void leadershipChanged() {
        reports.clear();
        excludedSince.clear();
        pendingExclusions.clear();
    }

    private static Map<String, WorkerAddress> automaticExclusions(MasterState s) {
        Map<String, WorkerAddress> out = new HashMap<>();
        for (WorkerInfo w : s.workers()) {
            String id = WorkerId.of(w.getAddress());
            if (s.workerState(id) == WorkerState.WORKER_EXCLUDED
                    && s.workerStateReason(id).startsWith(REASON_PREFIX)) {
                out.put(id, w.getAddress());
            }
        }
        return out;
    }

    private void prune(Map<String, Long> byApp, long now) {
        byApp.values().removeIf(t -> now - t >= windowMs);
    }

    private static String shorten(String reason) {
        String r = reason == null || reason.isEmpty() ? "no reason given" : reason;
        return r.length() <= MAX_REASON_CHARS ? r : r.substring(0, MAX_REASON_CHARS) + "...";
    }

    private static MasterCommand stateChange(WorkerAddress worker, WorkerState state, String reason) {
        return MasterCommand.newBuilder()
                .setWorkerStateChanged(WorkerStateChanged.newBuilder()
                        .setWorker(worker)
                        .setState(state)
                        .setReason(reason))
                .build();
    }

    /** Workers with reports in the window, for tests. */
    synchronized Set<String> reported() {
        return new HashSet<>(reports.keySet());
    }
}
