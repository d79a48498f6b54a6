package io.estuary.worker;

import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.RegisterWorkerRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.WorkerHeartbeatRequest;
import io.estuary.common.protocol.WorkerHeartbeatResponse;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.WorkerState;
import io.estuary.common.util.GuardedScheduledExecutor;
import io.estuary.network.client.RemoteException;
import io.estuary.network.rpc.MasterClient;
import io.estuary.worker.partition.PartitionRegistry;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the master informed: registers, then reports disks and held shuffles every interval, registers again
 * when the master no longer knows this worker, and deletes the shuffles the master says have expired. Each report
 * carries the worker's own state (active, decommissioning, shutting down); when the master holds DECOMMISSIONING
 * for an active worker (an operator asked the master), {@code onDecommission} runs. Beats run on one timer thread,
 * which never does disk I/O: expired shuffles are handed to a thread of their own (their records), whose file
 * deletions go to each disk's cleaner thread, so a hung disk can never stop the heartbeats (and get the worker
 * declared lost). A malformed key in the master's answer is logged and skipped.
 */
final class MasterHeartbeater {
    private static final Logger LOG = LoggerFactory.getLogger(MasterHeartbeater.class);

    private final MasterClient master;
    private final Supplier<WorkerInfo> self;
    private final PartitionRegistry registry;
    private final long intervalMs;
    private final Supplier<WorkerState> state;
    private final Runnable onDecommission;
    private final ScheduledExecutorService timer = new GuardedScheduledExecutor("worker-heartbeat");
    private volatile boolean registered;
    /** Removes expired shuffles (their records, then their files on each disk's cleaner thread). */
    private final java.util.concurrent.ExecutorService remover =
            new io.estuary.common.util.GuardedThreadPool("worker-shuffle-remover", 1);
    /** Expired shuffles handed to the remover and not yet removed: asked again, they are not queued twice. */
    private final java.util.Set<String> removing = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private final java.util.Set<String> unreportable = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final java.util.concurrent.atomic.AtomicLong answered = new java.util.concurrent.atomic.AtomicLong();

    private final java.util.function.Consumer<String> onApplicationRemoved;

    MasterHeartbeater(MasterClient master, Supplier<WorkerInfo> self, PartitionRegistry registry, long intervalMs) {
        this(master, self, registry, intervalMs, () -> WorkerState.WORKER_ACTIVE, () -> {});
    }

    MasterHeartbeater(
            MasterClient master,
            Supplier<WorkerInfo> self,
            PartitionRegistry registry,
            long intervalMs,
            Supplier<WorkerState> state,
            Runnable onDecommission) {
        this(master, self, registry, intervalMs, state, onDecommission, app -> {});
    }

    /** {@code onApplicationRemoved}: told each application the master says ended or expired (its secret goes). */
    MasterHeartbeater(
            MasterClient master,
            Supplier<WorkerInfo> self,
            PartitionRegistry registry,
            long intervalMs,
            Supplier<WorkerState> state,
            Runnable onDecommission,
            java.util.function.Consumer<String> onApplicationRemoved) {
        this.onApplicationRemoved = onApplicationRemoved;
        this.state = state;
        this.onDecommission = onDecommission;
        this.master = master;
        this.self = self;
        this.registry = registry;
        this.intervalMs = intervalMs;
    }

    void start() {
        timer.execute(this::beat);
        timer.scheduleWithFixedDelay(this::beat, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
    }

    /** Sends a heartbeat now (e.g. a disk changed state), besides the regular ones. Does not block. */
    void beatNow() {
        try {
            timer.execute(this::beat);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            // shutting down
        }
    }

    boolean registered() {
        return registered;
    }

    /** Reports to the master now (e.g. a state change), waiting at most {@code timeoutMs}; true if it answered. */
    boolean beatNow(long timeoutMs) {
        try {
            return timer.submit((java.util.concurrent.Callable<Boolean>) this::beat)
                    .get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException | TimeoutException | java.util.concurrent.RejectedExecutionException e) {
            return false;
        }
    }

    /**
     * The shuffle keys to report: every key the registry holds that the master accepts. A key it would refuse (one
     * recovered from the metadata of a release that did not validate ids) would fail every report, and the master
     * would declare this worker lost; it is left out, with a warning once, and its files stay until an operator
     * removes them.
     */
    private java.util.List<String> reportableKeys() {
        java.util.List<String> keys = new java.util.ArrayList<>();
        for (String key : registry.shuffleKeys()) {
            String problem = io.estuary.common.util.Ids.shuffleKeyProblem("shuffle key", key);
            if (problem == null) {
                keys.add(key);
            } else if (unreportable.add(key)) {
                LOG.warn("Not reporting {} to the master: {}", key, problem);
            }
        }
        return keys;
    }

    /** This worker's tags (estuary.worker.tags), sent with its registration and every heartbeat. */
    private volatile java.util.List<String> tags = java.util.Collections.emptyList();

    /** Sets the tags reported from now on; returns this. */
    MasterHeartbeater withTags(java.util.List<String> tags) {
        this.tags = java.util.Collections.unmodifiableList(new java.util.ArrayList<>(tags));
        return this;
    }

    /** Each application's push rate into this worker, reported with every heartbeat for the masters' quotas. */
    private volatile Supplier<java.util.Map<String, Long>> pushRates = java.util.Collections::emptyMap;

    /** Sets where push rates are read from; returns this. */
    MasterHeartbeater withPushRates(Supplier<java.util.Map<String, Long>> rates) {
        this.pushRates = rates;
        return this;
    }

    /** What this worker holds of each shuffle and how fast each application pushes, for the masters' quotas. */
    private WorkerHeartbeatRequest.Builder withUsage(WorkerHeartbeatRequest.Builder b) {
        b.addAllUsage(registry.usage());
        for (java.util.Map.Entry<String, Long> e : pushRates.get().entrySet()) {
            b.addPushRates(io.estuary.common.protocol.ApplicationPushRate.newBuilder()
                    .setAppId(e.getKey())
                    .setBytesPerSecond(e.getValue()));
        }
        return b;
    }

    /** One report; true if the master answered. */
    private boolean beat() {
        try {
            WorkerState mine = state.get();
            if (!registered) {
                master.ask(
                        Request.newBuilder()
                                .setRegisterWorker(RegisterWorkerRequest.newBuilder()
                                        .setWorker(self.get())
                                        .addAllShuffleKeys(reportableKeys())
                                        .setState(mine)
                                        .addAllTags(tags)),
                        Empty.parser(),
                        intervalMs);
                registered = true;
                answered.incrementAndGet();
                LOG.info("Registered with the master");
                return true;
            }
            WorkerHeartbeatResponse r = master.ask(
                    Request.newBuilder()
                            .setWorkerHeartbeat(withUsage(WorkerHeartbeatRequest.newBuilder()
                                    .setWorker(self.get())
                                    .addAllShuffleKeys(reportableKeys())
                                    .setState(mine)
                                    .addAllTags(tags))),
                    WorkerHeartbeatResponse.parser(),
                    intervalMs);
            answered.incrementAndGet();
            if (!r.getRegistered()) {
                LOG.warn("The master does not know this worker; registering again");
                registered = false;
                timer.execute(this::beat);
            }
            for (String key : r.getExpiredShuffleKeysList()) removeLater(key);
            for (String app : r.getRemovedAppIdsList()) onApplicationRemoved.accept(app);
            if (r.getRegistered()
                    && r.getState() == WorkerState.WORKER_DECOMMISSIONING
                    && mine == WorkerState.WORKER_ACTIVE) {
                onDecommission.run();
            }
            return true;
        } catch (RemoteException | RuntimeException e) {
            LOG.warn("Heartbeat to the master failed: {}", e.getMessage());
            return false;
        }
    }

    private void removeLater(String key) {
        String bad = io.estuary.common.util.Ids.shuffleKeyProblem("expired shuffle key", key);
        if (bad != null) {
            LOG.warn("The master named a malformed expired shuffle: {}; skipped", bad);
            return;
        }
        if (!registry.hasShuffle(key) || !removing.add(key)) return;
        try {
            remover.execute(() -> {
                try {
                    LOG.info("Deleting expired shuffle {}", key);
                    registry.remove(key);
                } catch (RuntimeException e) {
                    LOG.warn("Deleting expired shuffle {} failed", key, e);
                } finally {
                    removing.remove(key);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            removing.remove(key);
        }
    }

    /** Heartbeats (and registrations) the master has answered. */
    long answered() {
        return answered.get();
    }

    void close() {
        timer.shutdownNow();
        remover.shutdownNow();
    }
}
