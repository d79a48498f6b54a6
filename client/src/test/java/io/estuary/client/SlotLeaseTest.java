package io.estuary.client;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.RecordPlacementRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.master.Master;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import io.estuary.worker.MiniCluster;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Slot leases end to end (a real master and two workers, replicas on): a driver asks the master once for a lease,
 * places every shuffle by it without asking for slots, and each placement is recorded with the master afterwards;
 * every shuffle reads back exactly what was written. A master that grants no leases is asked for each shuffle's slots,
 * with the same result. A recorded placement is kept against later ones, a malformed one is refused by name, and one
 * for a shuffle already unregistered places nothing.
 */
class SlotLeaseTest {
    private static final int SHUFFLES = 12;
    private static final int MAPS = 2;
    private static final int PARTITIONS = 3;

    @Test
    void shufflesArePlacedByOneLeaseAndRecordedWithTheMaster() throws Exception {
        EstuaryConf conf = new EstuaryConf().set(MasterConfig.SLOT_LEASE_DURATION, "10min");
        try (MiniCluster cluster = new MiniCluster(2, 1, conf)) {
            Master master = cluster.master();
            try (LifecycleManager lifecycle = new LifecycleManager("app-lease", clientConf(cluster), "127.0.0.1");
                    ShuffleClient client = new ShuffleClient(clientConf(cluster))) {
                runShuffles(lifecycle, client);
                assertEquals(1, master.metrics().slotLeases(), "one lease for every shuffle");
                assertEquals(0, master.metrics().slotRequests(), "no shuffle asked for its slots");
                String app = lifecycle.appId();
                waitFor(
                        () -> master.metrics().placementsRecorded() == SHUFFLES
                                && (int) master.state(s -> s.shuffles(app).size()) == SHUFFLES,
                        "every placement recorded");
                Map<Integer, List<PartitionLocation>> placed =
                        master.state(s -> new java.util.HashMap<>(s.shuffles(app)));
                Set<String> workers = new HashSet<>();
                for (List<PartitionLocation> locs : placed.values()) {
                    assertEquals(PARTITIONS, locs.size());
                    for (PartitionLocation l : locs) {
                        assertTrue(l.hasPeer(), "replicated: " + l);
                        assertNotEquals(l.getWorker(), l.getPeer().getWorker(), "the replica on another worker");
                        workers.add(
                                l.getWorker().getHost() + ":" + l.getWorker().getRpcPort());
                    }
                }
                assertEquals(2, workers.size(), "primaries on both workers");

                // A shuffle's end goes to the master after its placement was recorded: it is forgotten, not revived.
                int first = java.util.Collections.min(placed.keySet()); // engine shuffle 0, the first registered
                lifecycle.unregisterShuffle(0);
                waitFor(() -> (boolean) master.state(s -> s.isShuffleUnregistered(app, first)), "shuffle 0 ended");
                assertFalse((boolean) master.state(s -> s.isShufflePlaced(app, first)));

                try (TransportClientFactory raw = new TransportClientFactory(
                        clientConf(cluster),
                        "raw",
                        io.estuary.network.auth.Credentials.application(app, lifecycle.applicationSecret()))) {
                    TransportClient c = raw.client("127.0.0.1", master.port());
                    WorkerAddress w = cluster.workers().get(0).address();
                    // A placement recorded again (a retry after a leader change, say) changes nothing.
                    int second = placed.keySet().stream()
                            .filter(id -> id != first)
                            .findFirst()
                            .get();
                    record(c, app, second, location(0, w, "/elsewhere"));
                    assertEquals(placed.get(second), master.state(s -> s.shuffle(app, second)));
                    // One for a shuffle already unregistered places nothing.
                    record(c, app, first, location(0, w, "/late"));
                    assertFalse((boolean) master.state(s -> s.isShufflePlaced(app, first)));
                    // A malformed one is refused, naming what is wrong.
                    RemoteException e =
                            assertThrows(RemoteException.class, () -> record(c, app, 99, location(1, w, "/d")));
                    assertEquals(StatusCode.BAD_REQUEST, e.status());
                    assertTrue(e.getMessage().contains("want partitions 0..n-1 in order"), e.getMessage());
                    assertFalse((boolean) master.state(s -> s.isShufflePlaced(app, 99)));
                }
            }
        }
    }

    @Test
    void aMasterThatGrantsNoLeasesIsAskedForEachShuffle() throws Exception {
        EstuaryConf conf = new EstuaryConf().set(MasterConfig.SLOT_LEASE_DURATION, "0s");
        try (MiniCluster cluster = new MiniCluster(2, 1, conf)) {
            Master master = cluster.master();
            try (LifecycleManager lifecycle = new LifecycleManager("app-nolease", clientConf(cluster), "127.0.0.1");
                    ShuffleClient client = new ShuffleClient(clientConf(cluster))) {
                runShuffles(lifecycle, client);
                assertEquals(0, master.metrics().slotLeases());
                assertEquals(SHUFFLES, master.metrics().slotRequests());
                assertEquals(0, master.metrics().placementsRecorded());
            }
        }
    }

    private static EstuaryConf clientConf(MiniCluster cluster) {
        return cluster.clientConf().set(ClientConfig.PUSH_BUFFER_SIZE, "8k").set(ClientConfig.PUSH_REPLICATE, "true");
    }

    /** {@link #SHUFFLES} shuffles one after another, each read back whole: counts and checksums equal. */
    private static void runShuffles(LifecycleManager lifecycle, ShuffleClient client) throws Exception {
        for (int shuffle = 0; shuffle < SHUFFLES; shuffle++) {
            ShuffleSpec spec =
                    new ShuffleSpec(lifecycle.appId(), shuffle, MAPS, PARTITIONS, "127.0.0.1", lifecycle.port());
            long count = 0;
            long sum = 0;
            for (int m = 0; m < MAPS; m++) {
                MapOutputWriter w = new MapOutputWriter(client, spec, m, 0);
                for (int i = 0; i < 500; i++) {
                    byte[] framed = FramedRecords.framed(shuffle * 1_000_003L + m * 1_000L + i, 1 + (i * 37) % 200);
                    w.write(Math.floorMod(i * 7 + m, PARTITIONS), framed, 0, framed.length);
                    count++;
                    sum += FramedRecords.hash(framed);
                }
                w.finish();
            }
            long[] got = FramedRecords.readAll(client, spec, 0, PARTITIONS);
            assertEquals(count, got[0], "records of shuffle " + shuffle);
            assertEquals(sum, got[1], "checksum of shuffle " + shuffle);
        }
    }

    private static PartitionLocation location(int partition, WorkerAddress w, String disk) {
        return PartitionLocation.newBuilder()
                .setPartitionId(partition)
                .setWorker(w)
                .setDisk(disk)
                .build();
    }

    private static void record(TransportClient c, String app, int shuffle, PartitionLocation loc)
            throws RemoteException {
        TransportClient.await(ControlClient.askAsync(
                c,
                Request.newBuilder()
                        .setRecordPlacement(RecordPlacementRequest.newBuilder()
                                .setAppId(app)
                                .setShuffleId(shuffle)
                                .addLocations(loc)),
                Empty.parser()));
    }
}
