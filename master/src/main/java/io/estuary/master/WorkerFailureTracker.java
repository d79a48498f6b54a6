package io.estuary.master;

import io.estuary.common.protocol.MasterCommand;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.WorkerState;
import io.estuary.common.protocol.WorkerStateChanged;
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

  private final StateLog log;
  private final int threshold;
  private final long windowMs;
  private final long graceMs;
  private final LongSupplier clock;
  /** Worker id to (application to the time of its latest report), within the window. */
  private final Map<String, Map<String, Long>> reports = new HashMap<>();
  /** Automatic exclusions, by worker id, to when they began (or when this leader first saw them). */
  private final Map<String, Long> excludedSince = new HashMap<>();

  WorkerFailureTracker(StateLog log, int threshold, long windowMs, long graceMs, LongSupplier clock) {
    this.log = log;
    this.threshold = threshold;
    this.windowMs = windowMs;
    this.graceMs = graceMs;
    this.clock = clock;
  }

  /**
   * Counts one application's report about some workers; excludes those that reach the threshold. Completes when
   * the exclusions are committed. Workers the master does not know, or that are not ACTIVE, are ignored.
   */
  synchronized CompletableFuture<Void> report(String appId, List<WorkerAddress> workers, String reason) {
    long now = clock.getAsLong();
    List<CompletableFuture<Void>> logged = new ArrayList<>();
    for (WorkerAddress a : workers) {
      String id = WorkerId.of(a);
      WorkerInfo known = log.stateMachine().read(s -> s.workerState(id) == WorkerState.WORKER_ACTIVE
          ? s.worker(id) : null);
      // A pending exclusion is not committed yet: do not log it twice.
      if (known == null || excludedSince.containsKey(id)) continue;
      Map<String, Long> byApp = reports.computeIfAbsent(id, k -> new HashMap<>());
      byApp.put(appId, now);
      prune(byApp, now);
      if (byApp.size() < threshold) continue;
      String why = REASON_PREFIX + byApp.size() + " applications: " + shorten(reason);
      reports.remove(id);
      excludedSince.put(id, now);
      LOG.warn("Worker {} excluded from placement for {} ms: {}", id, graceMs, why);
      logged.add(log.submit(stateChange(known.getAddress(), WorkerState.WORKER_EXCLUDED, why)));
    }
    return CompletableFuture.allOf(logged.toArray(new CompletableFuture<?>[0]));
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
      LOG.info("Worker {} back in placement: its exclusion for failure reports lasted {} ms", e.getKey(), now - since);
      out.add(stateChange(e.getValue(), WorkerState.WORKER_ACTIVE,
          "exclusion for failure reports over after " + graceMs + " ms"));
    }
    return out;
  }

  /** A new leader (or a deposed one) starts afresh. */
  synchronized void leadershipChanged() {
    reports.clear();
    excludedSince.clear();
  }

  private static Map<String, WorkerAddress> automaticExclusions(MasterState s) {
    Map<String, WorkerAddress> out = new HashMap<>();
    for (WorkerInfo w : s.workers()) {
      String id = WorkerId.of(w.getAddress());
      if (s.workerState(id) == WorkerState.WORKER_EXCLUDED && s.workerStateReason(id).startsWith(REASON_PREFIX)) {
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
    return MasterCommand.newBuilder().setWorkerStateChanged(WorkerStateChanged.newBuilder().setWorker(worker)
        .setState(state).setReason(reason)).build();
  }

  /** Workers with reports in the window, for tests. */
  synchronized Set<String> reported() {
    return new HashSet<>(reports.keySet());
  }
}
