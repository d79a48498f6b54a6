package io.estuary.master;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.MasterConfig;
import io.estuary.common.protocol.ApplicationHeartbeatRequest;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.RegisterWorkerRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.network.rpc.MasterClient;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The largest shuffle the request caps allow (200,000 partitions, replicated) placed by three real masters: its
 * placement is far larger than one Raft entry may be, and the group must keep working after it.
 */
class LargePlacementRaftTest {
    private static final int PARTITIONS = 200_000;

    @Test
    void aReplicatedPlacementOfTheMostPartitionsIsLoggedAndTheGroupKeepsWorking() throws Exception {
        // Nothing heartbeats here: keep workers and applications from expiring while the test runs.
        try (MasterGroup g = new MasterGroup(
                c -> c.set(MasterConfig.WORKER_TIMEOUT, "1h").set(MasterConfig.APPLICATION_TIMEOUT, "1h"))) {
            g.awaitLeader();
            MasterClient c = g.client();
            for (int w = 0; w < 3; w++) {
                c.ask(
                        Request.newBuilder()
                                .setRegisterWorker(RegisterWorkerRequest.newBuilder()
                                        .setWorker(WorkerInfo.newBuilder()
                                                .setAddress(WorkerAddress.newBuilder()
                                                        .setHost("worker-host-" + w + ".example.internal")
                                                        .setRpcPort(9100)
                                                        .setPushPort(9101)
                                                        .setFetchPort(9102))
                                                .addDisks(DiskInfo.newBuilder().setMountPoint("/mnt/disk1")))),
                        Empty.parser(),
                        30_000);
            }
            long t0 = System.nanoTime();
            List<PartitionLocation> locs = c.ask(
                            Request.newBuilder()
                                    .setRequestSlots(RequestSlotsRequest.newBuilder()
                                            .setAppId("app-big")
                                            .setShuffleId(0)
                                            .setNumPartitions(PARTITIONS)
                                            .setReplicate(true)),
                            RequestSlotsResponse.parser(),
                            120_000)
                    .getLocationsList();
            System.out.printf(
                    "PLACEMENT: %d replicated partitions placed and logged in %d ms%n",
                    locs.size(), (System.nanoTime() - t0) / 1_000_000);
            assertEquals(PARTITIONS, locs.size());
            for (PartitionLocation l : locs) assertTrue(l.hasPeer(), "every partition has a replica");

            // The group still takes changes: another application registers.
            c.ask(
                    Request.newBuilder()
                            .setApplicationHeartbeat(
                                    ApplicationHeartbeatRequest.newBuilder().setAppId("app-next")),
                    Empty.parser(),
                    30_000);
            int lead = g.awaitLeader();
            assertTrue((boolean) g.masters[lead].state(s -> s.hasApplication("app-next")));
            assertEquals(locs, g.masters[lead].state(s -> s.shuffle("app-big", 0)));

            // Every master holds the same state, the whole placement included.
            long applied = g.masters[lead].log().appliedIndex();
            byte[] expected = g.masters[lead].log().stateMachine().snapshot().toByteArray();
            for (int i = 0; i < 3; i++) {
                int m = i;
                waitFor(
                        () -> g.masters[m].log().appliedIndex() >= applied,
                        120_000,
                        "m" + m + " applies the placement");
                assertArrayEquals(
                        expected, g.masters[m].log().stateMachine().snapshot().toByteArray());
            }
        }
    }
}
