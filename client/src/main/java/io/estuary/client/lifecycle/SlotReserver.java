package io.estuary.client.lifecycle;

import com.google.protobuf.ByteString;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.ReserveSlotsRequest;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import io.estuary.network.rpc.SlotRequestCaps;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Reserves locations on the workers that will hold them, primaries and replicas alike (a primary's reservation
 * names its replica, so it knows where to forward). With authentication on, each reservation carries the
 * application's secret as the master sealed it for workers (under the cluster-derived key: this driver cannot open
 * it), the newest one a slot answer brought ({@link #sealsFrom}), and who runs it, sealed the same way: workers then know the secret before the
 * executors push, without asking a master (a reservation the driver places itself while no master answers carries
 * it too). State: its connections and that seal (volatile); thread-safe.
 */
final class SlotReserver {
    private final TransportClientFactory connections;
    private final String appId;

    private final String user;
    /** Empty until a slot answer brings one (authentication off, or a master of the previous release: never). */
    private volatile ByteString sealedSecret = ByteString.EMPTY;
    /** The master's seal of who runs the application, for the workers; empty as the secret's. */
    private volatile ByteString sealedPrincipal = ByteString.EMPTY;

    SlotReserver(TransportClientFactory connections, String appId, String user) {
        this.user = user;
        this.connections = connections;
        this.appId = appId;
    }

    /** Keeps the seals a slot answer carries (if any) for the reservations that follow. */
    void sealsFrom(RequestSlotsResponse slots) {
        seals(slots.getSealedSecret(), slots.getSealedPrincipal());
    }

    /** Keeps the seals of a slot answer or a lease, each unless empty, for the reservations that follow. */
    void seals(ByteString secret, ByteString principal) {
        if (!secret.isEmpty()) sealedSecret = secret;
        if (!principal.isEmpty()) sealedPrincipal = principal;
    }

    /** Reserves every copy of {@code locations}; returns the workers that refused or did not answer, with why. */
    Map<WorkerAddress, String> reserve(int shuffleId, List<PartitionLocation> locations) {
        Map<WorkerAddress, String> out = new LinkedHashMap<>();
        reserve(shuffleId, locations, false).forEach((w, e) -> out.put(w, e.getMessage()));
        return out;
    }

    /**
     * As {@link #reserve(int, List)}, the failure of each worker that refused; {@code byLease}: placed by a slot
     * lease, so that a worker refuses a location on a disk it cannot write ({@code DISK_FAILED}) rather than move it.
     */
    Map<WorkerAddress, RemoteException> reserve(int shuffleId, List<PartitionLocation> locations, boolean byLease) {
        Map<String, List<PartitionLocation>> byWorker = WorkerCalls.copiesByWorker(locations);
        ByteString sealed = sealedSecret;
        ByteString principal = sealedPrincipal;
        List<CompletableFuture<Empty>> calls = new ArrayList<>();
        List<WorkerAddress> workers = new ArrayList<>();
        for (List<PartitionLocation> locs : byWorker.values()) {
            WorkerAddress w = locs.get(0).getWorker();
            workers.add(w);
            // A worker takes at most so many locations per request (each becomes a partition writer on its heap).
            List<CompletableFuture<Empty>> parts = new ArrayList<>();
            for (int from = 0; from < locs.size(); from += SlotRequestCaps.PER_REQUEST) {
                List<PartitionLocation> part =
                        locs.subList(from, Math.min(locs.size(), from + SlotRequestCaps.PER_REQUEST));
                CompletableFuture<Empty> f;
                try {
                    TransportClient c = connections.client(w.getHost(), w.getRpcPort());
                    f = ControlClient.askAsync(
                            c,
                            Request.newBuilder()
                                    .setReserveSlots(ReserveSlotsRequest.newBuilder()
                                            .setAppId(appId)
                                            .setUser(user)
                                            .setShuffleId(shuffleId)
                                            .setSealedSecret(sealed)
                                            .setSealedPrincipal(principal)
                                            .setByLease(byLease)
                                            .addAllLocations(part)),
                            Empty.parser());
                } catch (RemoteException | RuntimeException e) {
                    f = new CompletableFuture<>();
                    f.completeExceptionally(e);
                }
                parts.add(f);
            }
            calls.add(CompletableFuture.allOf(parts.toArray(new CompletableFuture[0]))
                    .thenApply(v -> Empty.getDefaultInstance()));
        }
        Map<WorkerAddress, RemoteException> failed = new LinkedHashMap<>();
        for (int i = 0; i < calls.size(); i++) {
            try {
                TransportClient.await(calls.get(i));
            } catch (RemoteException e) {
                failed.put(workers.get(i), e);
            }
        }
        return failed;
    }
}
