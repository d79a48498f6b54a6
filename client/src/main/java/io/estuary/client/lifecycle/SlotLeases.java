package io.estuary.client.lifecycle;

import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.LeaseSlotsRequest;
import io.estuary.common.protocol.LeaseSlotsResponse;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.RecordPlacementRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.status.StatusCode;
import io.estuary.common.time.Clock;
import io.estuary.network.client.RemoteException;
import io.estuary.network.rpc.MasterClient;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The application's slot leases ({@code LeaseSlotsRequest}): the {@link ShuffleRegistrar} places a new shuffle by
 * the current lease instead of asking the master for its slots, reserves it on the workers as usual, and the
 * placement is then recorded with the master ({@link #record}) off the tasks' path, retried until a master takes it:
 * until then workers report the shuffle as unknown, which the master tolerates for an application timeout.
 *
 * <p>A lease is fetched when there is none, it expired, or it names a worker to avoid; registrations that need one
 * meanwhile wait for the same fetch. A master that refuses leases (turned off, or of the previous release) is asked
 * for each shuffle's slots from then on; a master that does not answer is asked again by the next registration.
 * Thread-safe.
 */
final class SlotLeases {
    private static final Logger LOG = LoggerFactory.getLogger(SlotLeases.class);
    private static final long RECORD_RETRY_MS = 5_000;

    private final String appId;
    /** The application's tag expression (estuary.client.tags, canonical; empty: any worker), sent with each ask. */
    private final String tags;

    private final MasterClient master;
    private final long masterWaitMs;
    private final boolean replicate;
    private final Clock clock;
    private final Executor work;
    /** Runs a task on {@link #work} after a delay in milliseconds. */
    private final BiConsumer<Runnable, Long> later;

    private volatile boolean enabled;
    /** Guarded by this. */
    private SlotLease lease;

    SlotLeases(
            String appId,
            MasterClient master,
            long masterWaitMs,
            boolean replicate,
            boolean enabled,
            Clock clock,
            Executor work,
            BiConsumer<Runnable, Long> later,
            String tags) {
        this.tags = tags;
        this.appId = appId;
        this.master = master;
        this.masterWaitMs = masterWaitMs;
        this.replicate = replicate;
        this.enabled = enabled;
        this.clock = clock;
        this.work = work;
        this.later = later;
    }

    /**
     * The lease to place a new shuffle by, without a copy on a worker of {@code avoid}: the current one, or one
     * fetched now. Null when there is none to use (leases refused, no worker to lease); fails when no master answers.
     */
    synchronized SlotLease current(Collection<String> avoid) throws RemoteException {
        if (!enabled) return null;
        long now = clock.nanos();
        if (lease != null && lease.usable(now, avoid)) return lease;
        lease = null;
        if (noLeaseUntil != 0 && now - noLeaseUntil < 0) return null;
        try {
            LeaseSlotsResponse r = master.ask(
                    Request.newBuilder()
                            .setLeaseSlots(LeaseSlotsRequest.newBuilder()
                                    .setAppId(appId)
                                    .setReplicate(replicate)
                                    .addAllExcludedWorkers(avoid)
                                    .setTags(tags)),
                    LeaseSlotsResponse.parser(),
                    masterWaitMs);
            if (r.getPatternCount() == 0) {
                // None for this long (a quota limits the application: the master admits each shuffle itself).
                if (r.getValidMs() > 0) noLeaseUntil = now + TimeUnit.MILLISECONDS.toNanos(r.getValidMs()) | 1;
                return null;
            }
            SlotLease l = new SlotLease(
                    r.getPatternList(),
                    now + TimeUnit.MILLISECONDS.toNanos(r.getValidMs()),
                    r.getSealedSecret(),
                    r.getSealedPrincipal());
            if (!l.usable(now, avoid)) return null;
            lease = l;
            return l;
        } catch (RemoteException e) {
            if (EpochAllocator.noMasterAnswers(e)) throw e;
            if (e.status() == StatusCode.BAD_REQUEST) {
                enabled = false;
                LOG.info(
                        "The master grants no slot leases ({}): {} asks for each shuffle's slots",
                        e.getMessage(),
                        appId);
            } else {
                LOG.debug("No slot lease for {}: {}", appId, e.getMessage());
            }
            return null;
        }
    }

    /** Until when (clock nanos) the master said it grants no lease; 0: no such answer. Guarded by this. */
    private long noLeaseUntil;

    /** A worker of the current lease refused a reservation: the next shuffle is placed by a new lease. */
    synchronized void drop(SlotLease refused) {
        if (lease == refused) lease = null;
    }

    /**
     * Records a placement made by a lease with the master, in the background; completes once a master took it (or
     * the manager closed). Retried while no master answers; a master that refuses it (unknown to a master of the
     * previous release) is asked for the shuffle's slots instead, so that it knows the shuffle all the same.
     */
    CompletableFuture<Void> record(int shuffleId, List<PartitionLocation> locations) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        submit(() -> recordNow(shuffleId, locations, done), 0);
        return done;
    }

    private void recordNow(int shuffleId, List<PartitionLocation> locations, CompletableFuture<Void> done) {
        try {
            master.ask(
                    Request.newBuilder()
                            .setRecordPlacement(RecordPlacementRequest.newBuilder()
                                    .setAppId(appId)
                                    .setShuffleId(shuffleId)
                                    .addAllLocations(locations)),
                    Empty.parser(),
                    masterWaitMs);
            done.complete(null);
        } catch (RemoteException e) {
            if (e.status() == StatusCode.BAD_REQUEST) {
                knownByRequest(shuffleId, locations.size(), done, e);
                return;
            }
            if (!retried(e)) {
                LOG.warn("The master refused the placement of shuffle {} of {}: {}", shuffleId, appId, e.getMessage());
                done.complete(null);
                return;
            }
            LOG.warn(
                    "Recording the placement of shuffle {} of {} failed ({}); trying again in {} ms",
                    shuffleId,
                    appId,
                    e.getMessage(),
                    RECORD_RETRY_MS);
            submit(() -> recordNow(shuffleId, locations, done), RECORD_RETRY_MS);
        }
    }

    /** Asks for the shuffle's slots (answer unused) so that the master knows it, and with it its workers' files. */
    private void knownByRequest(int shuffleId, int partitions, CompletableFuture<Void> done, RemoteException why) {
        LOG.warn(
                "The master refused the placement of shuffle {} of {} ({}); asking for its slots",
                shuffleId,
                appId,
                why);
        try {
            master.ask(
                    Request.newBuilder()
                            .setRequestSlots(RequestSlotsRequest.newBuilder()
                                    .setAppId(appId)
                                    .setShuffleId(shuffleId)
                                    .setNumPartitions(partitions)
                                    .setReplicate(replicate)
                                    .setTags(tags)),
                    RequestSlotsResponse.parser(),
                    masterWaitMs);
            done.complete(null);
        } catch (RemoteException e) {
            if (retried(e)) submit(() -> knownByRequest(shuffleId, partitions, done, e), RECORD_RETRY_MS);
            else done.complete(null); // refused: the application ended or may not place shuffles at all
        }
    }

    /** Whether the failure is one a later try may not meet: no master answered, or it asked to retry later. */
    private static boolean retried(RemoteException e) {
        return EpochAllocator.noMasterAnswers(e) || e.status() == StatusCode.RETRY_LATER;
    }

    private void submit(Runnable task, long delayMs) {
        try {
            if (delayMs == 0) work.execute(task);
            else later.accept(task, delayMs);
        } catch (RejectedExecutionException e) {
            // The manager is closing: the application ends, and its shuffles with it.
        }
    }
}
