package io.estuary.worker.lifecycle;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.OpenStreamRequest;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.ReserveSlotsRequest;
import io.estuary.common.protocol.StreamHandle;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerHeartbeatRequest;
import io.estuary.common.protocol.WorkerHeartbeatResponse;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.status.StatusCode;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import io.estuary.network.rpc.MasterClient;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Malformed identifiers (empty, too long, with a path separator or a control character, a negative shuffle id) sent
 * to a real master and worker on each port: every one is refused with BAD_REQUEST naming the field, nothing of it is
 * kept, the worker's heartbeats go on being answered, and the same servers then serve a whole shuffle. Before ids
 * were checked, a ReserveSlots with an empty application id made the worker hold the shuffle key "-0", which no
 * master can split: every later heartbeat of that worker failed, and the master declared it lost.
 */
class IdValidationTest {
    private static final List<String> BAD_APP_IDS =
            List.of("", "a/b", "a\\b", "..", ".", "app\u0000x", "line\nbreak", "x".repeat(256));

    @Test
    void malformedIdsAreRefusedAtEveryEntryPointAndHeartbeatsGoOn() throws Exception {
        // Permissive: the test sends an application's requests by hand, never registering its secret.
        try (MiniCluster cluster = new MiniCluster(
                        1, 1, new EstuaryConf().set(io.estuary.common.config.AuthConfig.MODE, "permissive"));
                TransportClientFactory clients = cluster.clusterClients("ids-test")) {
            MasterClient master = new MasterClient(clients, Collections.singletonList(cluster.masterEndpoint()));
            Worker worker = cluster.workers().get(0);
            RawShuffle s = new RawShuffle(clients, master, "app-ids", 0, 2);
            PartitionLocation l = s.locations.get(0);
            TransportClient rpc =
                    clients.client(l.getWorker().getHost(), l.getWorker().getRpcPort());
            TransportClient fetch =
                    clients.client(l.getWorker().getHost(), l.getWorker().getFetchPort());

            for (String bad : BAD_APP_IDS) {
                refused(
                        "reserve_slots.app_id",
                        () -> ControlClient.ask(
                                rpc,
                                Request.newBuilder()
                                        .setReserveSlots(ReserveSlotsRequest.newBuilder()
                                                .setAppId(bad)
                                                .setShuffleId(0)
                                                .addLocations(l)),
                                Empty.parser()));
                refused(
                        "request_slots.app_id",
                        () -> master.ask(
                                Request.newBuilder()
                                        .setRequestSlots(RequestSlotsRequest.newBuilder()
                                                .setAppId(bad)
                                                .setShuffleId(0)
                                                .setNumPartitions(1)),
                                RequestSlotsResponse.parser(),
                                10_000));
                refused(
                        "open_stream.app_id",
                        () -> ControlClient.ask(
                                fetch,
                                Request.newBuilder()
                                        .setOpenStream(OpenStreamRequest.newBuilder()
                                                .setAppId(bad)
                                                .setShuffleId(0)),
                                StreamHandle.parser()));
            }
            refused(
                    "reserve_slots.shuffle_id",
                    () -> ControlClient.ask(
                            rpc,
                            Request.newBuilder()
                                    .setReserveSlots(ReserveSlotsRequest.newBuilder()
                                            .setAppId("app-ids")
                                            .setShuffleId(-1)
                                            .addLocations(l)),
                            Empty.parser()));
            refused(
                    "reserve_slots.user",
                    () -> ControlClient.ask(
                            rpc,
                            Request.newBuilder()
                                    .setReserveSlots(ReserveSlotsRequest.newBuilder()
                                            .setAppId("app-ids")
                                            .setShuffleId(0)
                                            .setUser("eve\r\nforged log line")
                                            .addLocations(l)),
                            Empty.parser()));
            // A worker that reports a shuffle key no master can split is refused, not let in to fail later.
            WorkerInfo fake = WorkerInfo.newBuilder()
                    .setAddress(WorkerAddress.newBuilder()
                            .setHost("127.0.0.1")
                            .setRpcPort(1)
                            .setPushPort(2)
                            .setFetchPort(3))
                    .addDisks(DiskInfo.newBuilder().setMountPoint("/d"))
                    .build();
            refused(
                    "worker_heartbeat.shuffle_keys[1]",
                    () -> master.ask(
                            Request.newBuilder()
                                    .setWorkerHeartbeat(WorkerHeartbeatRequest.newBuilder()
                                            .setWorker(fake)
                                            .addShuffleKeys("app-ids-0")
                                            .addShuffleKeys("-0")),
                            WorkerHeartbeatResponse.parser(),
                            10_000));

            assertEquals(List.of(s.key()), worker.registry().shuffleKeys(), "nothing of a refused request is kept");
            long answered = worker.heartbeatsAnswered();
            waitFor(() -> worker.heartbeatsAnswered() >= answered + 3, 60_000, "the worker's heartbeats are answered");

            s.push(2);
            for (PartitionLocation p : s.locations) s.commitAndCheck(p);
            for (PartitionLocation p : s.locations) s.readAndCheck(p);
            s.unregister();
        }
    }

    interface Call {
        void run() throws Exception;
    }

    private static void refused(String field, Call call) {
        RemoteException e = assertThrows(RemoteException.class, call::run, field + " must be refused");
        assertEquals(StatusCode.BAD_REQUEST, e.status(), e.getMessage());
        assertTrue(e.getMessage().contains("refuses the request: " + field), e.getMessage());
    }
}
