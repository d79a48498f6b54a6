package io.estuary.master;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.DiskStatus;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.RegisterWorkerRequest;
import io.estuary.common.protocol.ReportWorkerFailuresRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.ReviveSlotsRequest;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.WorkerState;
import io.estuary.common.status.StatusCode;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.protocol.WorkerLost;
import io.estuary.master.state.WorkerId;
import io.estuary.network.auth.Credentials;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import io.estuary.testing.ClusterSecrets;
import io.estuary.testing.ManualClock;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A real single master on loopback, with fake workers (registered, never running): placement around bad workers. */
class WorkerLossPlacementTest {
    @TempDir
    Path tmp;

    /** What the master's liveness and exclusions read: an exclusion's grace ends only when the test says so. */
    private final ManualClock clock = new ManualClock();

    private Master master;
    private TransportClientFactory clients;

    @BeforeEach
    void start() throws Exception {
        Path secret = ClusterSecrets.newFile(tmp);
        master = new Master(
                ClusterSecrets.enable(new EstuaryConf(), secret)
                        // Permissive: the test registers applications implicitly, acting for them as the cluster.
                        .set(AuthConfig.MODE, "permissive")
                        .set(MasterConfig.HOST, "127.0.0.1")
                        .set(MasterConfig.PORT, "0")
                        .set(MasterConfig.HTTP_PORT, "0")
                        .set(MasterConfig.LIVENESS_CHECK_INTERVAL, "50ms")
                        .set(MasterConfig.WORKER_FAILURE_EXCLUDE_THRESHOLD, "1")
                        .set(MasterConfig.WORKER_FAILURE_EXCLUDE_GRACE, "1s"),
                () -> {},
                clock);
        // The test acts for the workers and the applications: it proves the cluster secret.
        clients =
                new TransportClientFactory(new EstuaryConf(), "test", Credentials.cluster(ClusterSecrets.read(secret)));
        for (int i = 1; i <= 3; i++) ask(registerWorker(i), Empty.parser());
    }

    @AfterEach
    void stop() throws Exception {
        if (clients != null) clients.close();
        if (master != null) master.halt();
    }

    private <T extends com.google.protobuf.MessageLite> T ask(Request.Builder r, com.google.protobuf.Parser<T> p)
            throws RemoteException {
        return ControlClient.ask(clients.client("127.0.0.1", master.port()), r, p);
    }

    private static WorkerAddress addr(int i) {
        return WorkerAddress.newBuilder()
                .setHost("10.0.0." + i)
                .setRpcPort(1)
                .setPushPort(2)
                .setFetchPort(3)
                .build();
    }

    private static String id(int i) {
        return WorkerId.of(addr(i));
    }

    private static Request.Builder registerWorker(int i) {
        return Request.newBuilder()
                .setRegisterWorker(RegisterWorkerRequest.newBuilder()
                        .setWorker(WorkerInfo.newBuilder()
                                .setAddress(addr(i))
                                .addDisks(DiskInfo.newBuilder()
                                        .setMountPoint("/d1")
                                        .setStatus(DiskStatus.DISK_HEALTHY)
                                        .setUsableBytes(500L << 30))));
    }

    private List<PartitionLocation> slots(String app, int shuffle, int n, boolean replicate, String... excluded)
            throws RemoteException {
        return ask(
                        Request.newBuilder()
                                .setRequestSlots(RequestSlotsRequest.newBuilder()
                                        .setAppId(app)
                                        .setShuffleId(shuffle)
                                        .setNumPartitions(n)
                                        .setReplicate(replicate)
                                        .addAllExcludedWorkers(Arrays.asList(excluded))),
                        RequestSlotsResponse.parser())
                .getLocationsList();
    }

    private List<PartitionLocation> revive(
            String app, int shuffle, List<Integer> ids, boolean replicate, String... excluded) throws RemoteException {
        return ask(
                        Request.newBuilder()
                                .setReviveSlots(ReviveSlotsRequest.newBuilder()
                                        .setAppId(app)
                                        .setShuffleId(shuffle)
                                        .addAllPartitionIds(ids)
                                        .setReplicate(replicate)
                                        .addAllExcludedWorkers(Arrays.asList(excluded))),
                        RequestSlotsResponse.parser())
                .getLocationsList();
    }

    private static Set<String> workersOf(List<PartitionLocation> locs) {
        Set<String> out = new HashSet<>();
        for (PartitionLocation l : locs) {
            out.add(WorkerId.of(l.getWorker()));
            if (l.hasPeer()) out.add(WorkerId.of(l.getPeer().getWorker()));
        }
        return out;
    }

    private WorkerState state(int i) {
        return master.state(s -> s.workerState(id(i)));
    }

    @Test
    void excludedWorkersGetNoNewSlots() throws Exception {
        List<PartitionLocation> locs = slots("app-1", 0, 30, true, id(1));
        assertEquals(30, locs.size());
        assertEquals(new HashSet<>(Arrays.asList(id(2), id(3))), workersOf(locs));
        // host:rpcPort names a worker too.
        assertFalse(workersOf(slots("app-1", 1, 30, false, "10.0.0.2:1")).contains(id(2)));
        // Excluding every worker leaves nowhere to go: a clear, final error.
        RemoteException e = assertThrows(RemoteException.class, () -> slots("app-1", 2, 4, false, id(1), id(2), id(3)));
        assertEquals(StatusCode.FATAL, e.status(), e.getMessage());
        assertTrue(e.getMessage().contains("no slots"), e.getMessage());
    }

    @Test
    void aLoggedPlacementOnALostWorkerIsRepairedOnRequest() throws Exception {
        List<PartitionLocation> before = slots("app-1", 0, 30, true);
        assertEquals(new HashSet<>(Arrays.asList(id(1), id(2), id(3))), workersOf(before));
        assertEquals(before, slots("app-1", 0, 30, true), "an intact placement is answered as logged");

        master.log()
                .submit(MasterCommand.newBuilder()
                        .setWorkerLost(WorkerLost.newBuilder().setWorker(addr(2)))
                        .build())
                .join();
        List<PartitionLocation> after = slots("app-1", 0, 30, true);
        assertEquals(30, after.size());
        assertFalse(workersOf(after).contains(id(2)), "a lost worker is never handed out");
        for (int p = 0; p < 30; p++) {
            PartitionLocation was = before.get(p);
            PartitionLocation now = after.get(p);
            assertEquals(p, now.getPartitionId());
            assertEquals(p, now.getPeer().getPartitionId());
            assertNotEquals(now.getWorker(), now.getPeer().getWorker());
            if (!workersOf(Arrays.asList(was)).contains(id(2))) assertEquals(was, now, "partition " + p + " was fine");
        }
        assertEquals(after, master.state(s -> s.shuffle("app-1", 0)), "the repaired placement is logged");

        // Excluded by the driver or not ACTIVE any more: repaired the same way. With one usable worker left,
        // replication has nowhere to go and the locations come without peers.
        master.setWorkerState(id(3), WorkerState.WORKER_DECOMMISSIONING, "test");
        RemoteException e = assertThrows(RemoteException.class, () -> slots("app-1", 0, 30, true, id(1)));
        assertEquals(StatusCode.FATAL, e.status());
        ask(registerWorker(4), Empty.parser());
        List<PartitionLocation> last = slots("app-1", 0, 30, true, id(1));
        assertEquals(new HashSet<>(Arrays.asList(id(4))), workersOf(last));
        for (PartitionLocation l : last) assertFalse(l.hasPeer());
        assertEquals(last, master.state(s -> s.shuffle("app-1", 0)));
    }

    @Test
    void replicationWithASingleWorkerGivesLocationsWithoutPeers() throws Exception {
        List<PartitionLocation> locs = slots("app-1", 0, 5, true, id(1), id(2));
        assertEquals(5, locs.size());
        for (PartitionLocation l : locs) {
            assertEquals(addr(3), l.getWorker());
            assertFalse(l.hasPeer());
        }
    }

    @Test
    void revivesGoToLiveWorkersWithReplicasElsewhereAndAreNotLogged() throws Exception {
        slots("app-1", 0, 12, true);
        byte[] logged = master.log().stateMachine().snapshot().toByteArray();
        master.setWorkerState(id(3), WorkerState.WORKER_EXCLUDED, "operator");
        ask(registerWorker(4), Empty.parser());
        List<Integer> ids = Arrays.asList(7, 3, 11, 0);
        for (int round = 0; round < 5; round++) {
            List<PartitionLocation> locs = revive("app-1", 0, ids, true, id(1));
            assertEquals(ids.size(), locs.size());
            for (int i = 0; i < ids.size(); i++) {
                PartitionLocation l = locs.get(i);
                assertEquals((int) ids.get(i), l.getPartitionId());
                assertEquals(0, l.getEpoch());
                assertTrue(l.hasPeer());
                assertEquals((int) ids.get(i), l.getPeer().getPartitionId());
                assertNotEquals(l.getWorker(), l.getPeer().getWorker());
            }
            assertEquals(
                    new HashSet<>(Arrays.asList(id(2), id(4))),
                    workersOf(locs),
                    "only live, active, not excluded workers");
        }
        // One usable worker: the revive still succeeds, without replicas.
        for (PartitionLocation l : revive("app-1", 0, Arrays.asList(5), true, id(1), id(2))) {
            assertEquals(addr(4), l.getWorker());
            assertFalse(l.hasPeer());
        }
        assertTrue(revive("app-1", 0, Arrays.asList(), true).isEmpty());
        assertEquals(7, master.reviveSlotRequests());
        // Registering worker 4 and excluding worker 3 changed the log; the revives did not touch the placement.
        assertEquals(
                master.state(s -> s.shuffle("app-1", 0)),
                io.estuary.master.protocol.MasterSnapshot.parseFrom(logged)
                        .getApplications(0)
                        .getShuffles(0)
                        .getLocationsList());
    }

    @Test
    void failureReportsExcludeAWorkerUntilItsGraceEnds() throws Exception {
        // A fourth worker: an exclusion never leaves fewer than two workers that can take slots.
        ask(registerWorker(4), Empty.parser());
        master.setWorkerState(id(1), WorkerState.WORKER_EXCLUDED, "operator");
        ask(
                Request.newBuilder()
                        .setReportWorkerFailures(ReportWorkerFailuresRequest.newBuilder()
                                .setAppId("app-1")
                                .addWorkers(addr(2))
                                .addWorkers(addr(9))
                                .setReason("connection refused")),
                Empty.parser());
        assertEquals(WorkerState.WORKER_EXCLUDED, state(2));
        assertTrue(master.state(s -> s.workerStateReason(id(2))).contains("connection refused"));
        assertNull(master.state(s -> s.worker(id(9))), "a report about an unknown worker changes nothing");
        assertEquals(new HashSet<>(Arrays.asList(id(3), id(4))), workersOf(slots("app-1", 0, 6, false)));

        clock.advanceMillis(2_000); // past the 1 s grace
        waitFor(() -> state(2) == WorkerState.WORKER_ACTIVE, "the grace ends and the worker is back");
        assertEquals(WorkerState.WORKER_EXCLUDED, state(1), "the operator's exclusion stands");
        assertEquals(new HashSet<>(Arrays.asList(id(2), id(3), id(4))), workersOf(slots("app-1", 1, 6, false)));
    }
}
