package io.estuary.worker;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.LocationRole;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.ReserveSlotsRequest;
import io.estuary.common.protocol.ReviveSlotsRequest;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.common.util.ShuffleKey;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import io.estuary.network.rpc.SlotRequestCaps;
import org.junit.jupiter.api.Test;

/**
 * A ReserveSlots makes a worker build a partition writer per location, a ReviveSlots makes the master build a
 * location per partition: each takes at most what its server's heap holds ({@link SlotRequestCaps}, from this JVM's
 * heap here, since the servers run in it). At the cap the request is served; one entry past it is refused with
 * BAD_REQUEST naming the cap, before anything is built, and the same connection is served on.
 */
class SlotRequestCapsTest {
    private static final long HEAP = Runtime.getRuntime().maxMemory();

    private static Request.Builder reserve(String app, int shuffle, int locations, WorkerAddress on) {
        ReserveSlotsRequest.Builder r =
                ReserveSlotsRequest.newBuilder().setAppId(app).setShuffleId(shuffle);
        for (int p = 0; p < locations; p++) {
            r.addLocations(PartitionLocation.newBuilder()
                    .setPartitionId(p)
                    .setRole(LocationRole.PRIMARY)
                    .setWorker(on));
        }
        return Request.newBuilder().setReserveSlots(r);
    }

    private static Request.Builder revive(String app, int partitions) {
        ReviveSlotsRequest.Builder r =
                ReviveSlotsRequest.newBuilder().setAppId(app).setShuffleId(0);
        for (int p = 0; p < partitions; p++) r.addPartitionIds(p);
        return Request.newBuilder().setReviveSlots(r);
    }

    @Test
    void aReservationAtTheCapIsTakenAndOnePastItRefused() throws Exception {
        try (MiniCluster cluster = new MiniCluster(
                        1, 1, new EstuaryConf().set(io.estuary.common.config.AuthConfig.MODE, "permissive"));
                TransportClientFactory clients = cluster.clusterClients("test-driver")) {
            Worker w = cluster.workers().get(0);
            int cap = SlotRequestCaps.reserveLocations(HEAP);
            TransportClient c =
                    clients.client(w.address().getHost(), w.address().getRpcPort());
            RemoteException e = assertThrows(
                    RemoteException.class,
                    () -> ControlClient.ask(c, reserve("app-caps", 1, cap + 1, w.address()), Empty.parser()));
            assertEquals(StatusCode.BAD_REQUEST, e.status(), e.getMessage());
            assertTrue(
                    e.getMessage()
                            .contains("reserve_slots.locations has more than " + cap + " entries: one request "
                                    + "may take 1/16 of this server's"),
                    e.getMessage());
            assertNull(
                    w.registry().writer(ShuffleKey.of("app-caps", 1), 0, 0), "nothing of the refused request is held");

            ControlClient.ask(c, reserve("app-caps", 2, cap, w.address()), Empty.parser());
            assertNotNull(w.registry().writer(ShuffleKey.of("app-caps", 2), cap - 1, 0), "every location is reserved");
        }
    }

    @Test
    void aReviveAtTheCapIsPlacedAndOnePastItRefused() throws Exception {
        try (MiniCluster cluster = new MiniCluster(
                        1, 1, new EstuaryConf().set(io.estuary.common.config.AuthConfig.MODE, "permissive"));
                TransportClientFactory clients = cluster.clusterClients("test-driver")) {
            int cap = SlotRequestCaps.revivePartitions(HEAP);
            String[] master = cluster.masterEndpoint().split(":");
            TransportClient c = clients.client(master[0], Integer.parseInt(master[1]));
            RemoteException e = assertThrows(
                    RemoteException.class,
                    () -> ControlClient.ask(c, revive("app-caps", cap + 1), RequestSlotsResponse.parser()));
            assertEquals(StatusCode.BAD_REQUEST, e.status(), e.getMessage());
            assertTrue(
                    e.getMessage().contains("revive_slots.partition_ids has more than " + cap + " entries"),
                    e.getMessage());

            RequestSlotsResponse r = ControlClient.ask(c, revive("app-caps", cap), RequestSlotsResponse.parser());
            assertEquals(cap, r.getLocationsCount(), "a location for every partition");
        }
    }
}
