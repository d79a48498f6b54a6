package io.estuary.client.lifecycle;

import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.common.util.EstuaryException;
import io.estuary.network.client.RemoteException;
import io.estuary.network.rpc.MasterClient;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registers shuffles for the {@link LifecycleManager}: slots from the master, reserved on their workers. A worker
 * that refuses is avoided (and reported to the master) and the slots are asked again, a few times. The first task of
 * a shuffle starts its registration; the others wait for the same one; a failed one is dropped, so a later task tries
 * again. Thread-safe.
 */
final class ShuffleRegistrar {
    private static final Logger LOG = LoggerFactory.getLogger(ShuffleRegistrar.class);
    private static final int ATTEMPTS = 3;

    private final String appId;
    /** The application's tag expression (estuary.client.tags, canonical; empty: any worker), sent with each ask. */
    private final String tags;

    private final MasterClient master;
    private final long masterWaitMs;
    private final boolean replicate;
    private final SlotReserver reserver;
    /** Where new shuffles are placed without asking the master, when it grants leases. */
    private final SlotLeases leases;

    private final FailedWorkers failedWorkers;
    private final Consumer<List<WorkerAddress>> reportFailedWorkers;
    /** Where registrations run: they call the master, so never on a caller's (an RPC handler's) thread. */
    private final Executor work;

    private final AtomicBoolean warnedSingleCopy = new AtomicBoolean();

    ShuffleRegistrar(
            String appId,
            MasterClient master,
            long masterWaitMs,
            boolean replicate,
            SlotReserver reserver,
            SlotLeases leases,
            FailedWorkers failedWorkers,
            Consumer<List<WorkerAddress>> reportFailedWorkers,
            Executor work,
            String tags) {
        this.tags = tags;
        this.appId = appId;
        this.master = master;
        this.masterWaitMs = masterWaitMs;
        this.replicate = replicate;
        this.reserver = reserver;
        this.leases = leases;
        this.failedWorkers = failedWorkers;
        this.reportFailedWorkers = reportFailedWorkers;
        this.work = work;
    }

    /**
     * The shuffle's slots: registered on {@code work} once; the registration running or done, when there is one. A
     * registration queued at the shuffle's declaration and not started yet is started now on {@code work} too: a
     * writer waits for it (whichever thread takes it first runs it).
     */
    CompletableFuture<EpochTable> register(ShuffleState s) {
        synchronized (s) {
            if (s.slots == null) {
                CompletableFuture<EpochTable> f = new CompletableFuture<>();
                AtomicBoolean taken = new AtomicBoolean();
                s.slots = f;
                s.registrationTaken = taken;
                s.registrationAhead = false;
                work.execute(() -> run(s, f, taken));
            } else if (s.registrationAhead && !s.registrationTaken.get()) {
                s.registrationAhead = false; // taken over once
                CompletableFuture<EpochTable> f = s.slots;
                AtomicBoolean taken = s.registrationTaken;
                work.execute(() -> run(s, f, taken));
            }
            return s.slots;
        }
    }

    /**
     * Queues the registration of a shuffle just declared on {@code ahead}, where declarations wait for each other
     * rather than in front of writers' registrations (a writer's {@link #register} takes it over if it has not
     * started). A failure is logged; the first writer then tries again.
     */
    void registerAhead(ShuffleState s, Executor ahead) {
        CompletableFuture<EpochTable> f = new CompletableFuture<>();
        synchronized (s) {
            if (s.slots != null) return;
            AtomicBoolean taken = new AtomicBoolean();
            s.slots = f;
            s.registrationTaken = taken;
            s.registrationAhead = true;
            try {
                ahead.execute(() -> run(s, f, taken));
            } catch (RejectedExecutionException e) { // the manager is closing
                s.slots = null;
                s.registrationAhead = false;
                return;
            }
        }
        f.whenComplete((v, e) -> {
            if (e != null && !s.forgotten) {
                LOG.warn(
                        "Registering {} of {} when it was declared failed ({}); its first task tries again",
                        s,
                        appId,
                        e.getMessage());
            }
        });
    }

    /** Runs the registration {@code f} stands for, unless another thread took it; a failed one is dropped. */
    private void run(ShuffleState s, CompletableFuture<EpochTable> f, AtomicBoolean taken) {
        if (!taken.compareAndSet(false, true)) return;
        if (s.forgotten) {
            f.completeExceptionally(new EstuaryException(s + " of " + appId + " was forgotten before it registered"));
            return;
        }
        try {
            f.complete(allocate(s));
        } catch (Throwable e) {
            synchronized (s) {
                if (s.slots == f) s.slots = null; // let a later task try again
            }
            f.completeExceptionally(e);
        }
    }

    /**
     * The shuffle placed by the application's slot lease and reserved on its workers, its placement then recorded
     * with the master in the background; null when there is no lease to use or a worker refused (then avoided, and
     * the master asked).
     */
    private EpochTable placeByLease(ShuffleState s) {
        SlotLease lease;
        try {
            lease = leases.current(failedWorkers.ids());
        } catch (RemoteException e) {
            throw new EstuaryException("cannot register " + s + " of " + appId + ": " + e.getMessage(), e);
        }
        if (lease == null) return null;
        List<PartitionLocation> locations = lease.place(s.numPartitions);
        warnIfSingleCopy(locations);
        reserver.seals(lease.sealedSecret(), lease.sealedPrincipal());
        Map<WorkerAddress, RemoteException> refused = reserver.reserve(s.shuffleId, locations, true);
        if (refused.isEmpty()) {
            s.recorded = leases.record(s.shuffleId, locations);
            LOG.info(
                    "{}: {} partitions on {} workers (by lease)",
                    s,
                    s.numPartitions,
                    WorkerCalls.copiesByWorker(locations).size());
            return new EpochTable(locations);
        }
        leases.drop(lease);
        LOG.warn("Reserving slots of {} by lease failed on {}; asking the master", s, refused);
        // A disk the lease named that cannot take data now is no fault of its worker: the master knows of it.
        refused.values().removeIf(e -> e.status() == StatusCode.DISK_FAILED);
        List<WorkerAddress> fresh = failedWorkers.add(refused.keySet());
        if (!fresh.isEmpty()) reportFailedWorkers.accept(fresh);
        return null;
    }

    /** How long the shuffle has waited for admission under a quota so far; 0 when it is not waiting. */
    private static long admissionWaitedMs(ShuffleState s) {
        long since = s.admissionWaitSince;
        return since == 0 ? 0 : java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
    }

    /**
     * Whether the master answered under a quota: refused (QUOTA_EXCEEDED, the job fails with its message) or told to
     * wait (ADMISSION_WAIT: the registration fails with it, and whoever asked asks again after a pause, saying how
     * long the shuffle has waited).
     */
    private boolean quotaAnswer(ShuffleState s, RemoteException e) {
        if (e.status() == StatusCode.ADMISSION_WAIT) {
            if (s.admissionWaitSince == 0) {
                s.admissionWaitSince = System.nanoTime() | 1; // never 0
                LOG.warn("{} of {} waits for admission: {}", s, appId, e.getMessage());
            }
            return true;
        }
        if (e.status() == StatusCode.QUOTA_EXCEEDED) {
            s.admissionWaitSince = 0;
            LOG.error("{} of {} is refused: {}", s, appId, e.getMessage());
            return true;
        }
        return false;
    }

    private void warnIfSingleCopy(List<PartitionLocation> locations) {
        if (replicate
                && !locations.isEmpty()
                && !locations.get(0).hasPeer()
                && warnedSingleCopy.compareAndSet(false, true)) {
            LOG.warn("{} is replicated, but the cluster has one usable worker: its shuffles keep a single copy", appId);
        }
    }

    /**
     * Slots from the master, reserved on their workers; a worker that refuses is avoided and the slots asked again.
     * Workers this application saw fail are avoided only while the master has others.
     */
    private EpochTable allocate(ShuffleState s) {
        EpochTable leased = placeByLease(s);
        if (leased != null) return leased;
        String last = "";
        boolean trustMasterOnly = false;
        for (int attempt = 0; attempt < ATTEMPTS; ) { // counts the workers' refusals
            List<PartitionLocation> locations;
            List<String> avoid = trustMasterOnly ? Collections.emptyList() : failedWorkers.ids();
            try {
                RequestSlotsResponse r = master.ask(
                        Request.newBuilder()
                                .setRequestSlots(RequestSlotsRequest.newBuilder()
                                        .setAppId(appId)
                                        .setShuffleId(s.shuffleId)
                                        .setNumPartitions(s.numPartitions)
                                        .setReplicate(replicate)
                                        .addAllExcludedWorkers(avoid)
                                        .setTags(tags)
                                        .setAdmissionWaitedMs(admissionWaitedMs(s))
                                        .setCanWait(true)),
                        RequestSlotsResponse.parser(),
                        masterWaitMs);
                locations = r.getLocationsList();
                reserver.sealsFrom(r);
                s.admissionWaitSince = 0;
            } catch (RemoteException e) {
                if (quotaAnswer(s, e) || avoid.isEmpty() || EpochAllocator.noMasterAnswers(e)) {
                    throw new EstuaryException("cannot register " + s + " of " + appId + ": " + e.getMessage(), e);
                }
                // The workers this application saw fail may be all the master has (one worker that dropped a
                // connection, say): they are only to be avoided while there are others. The master's own view of
                // live workers decides now, and the reservations weed out the dead.
                LOG.warn(
                        "No slots for {} of {} while avoiding {} ({}); asking again without avoiding them",
                        s,
                        appId,
                        avoid,
                        e.getMessage());
                trustMasterOnly = true;
                continue;
            }
            warnIfSingleCopy(locations);
            Map<WorkerAddress, String> refused = reserver.reserve(s.shuffleId, locations);
            if (refused.isEmpty()) {
                LOG.info(
                        "{}: {} partitions on {} workers",
                        s,
                        s.numPartitions,
                        WorkerCalls.copiesByWorker(locations).size());
                return new EpochTable(locations);
            }
            attempt++;
            last = refused.toString();
            LOG.warn("Reserving slots of {} failed on {}; asking for others", s, refused);
            trustMasterOnly = false; // these refusals are facts: avoid them next time
            List<WorkerAddress> fresh = failedWorkers.add(refused.keySet());
            if (!fresh.isEmpty()) reportFailedWorkers.accept(fresh);
        }
        throw new EstuaryException(
                "cannot register " + s + " of " + appId + ": workers kept refusing the slots: " + last);
    }
}
