package io.estuary.worker;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.protocol.ApplicationHeartbeatRequest;
import io.estuary.common.protocol.CommitFilesRequest;
import io.estuary.common.protocol.CommitFilesResponse;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.ReserveSlotsRequest;
import io.estuary.common.protocol.UnregisterShuffleRequest;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.util.ShuffleKey;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import io.estuary.network.rpc.MasterClient;
import io.netty.buffer.Unpooled;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The master's bookkeeping seen from the outside: expiry deletes data on workers; lost workers get no slots. */
class MasterWorkerLifecycleTest {

    private static EstuaryConf fastTimeouts() {
        // Permissive: the test sends an application's requests by hand, never registering its secret.
        return new EstuaryConf()
                .set(io.estuary.common.config.AuthConfig.MODE, "permissive")
                .set(MasterConfig.APPLICATION_TIMEOUT, "2s")
                // Heartbeats every 300 ms: 5 s lets a live worker survive a stall of a loaded machine.
                .set(MasterConfig.WORKER_TIMEOUT, "5s")
                .set(MasterConfig.LIVENESS_CHECK_INTERVAL, "200ms")
                .set(io.estuary.common.config.WorkerConfig.HEARTBEAT_INTERVAL, "300ms");
    }

    /** Registers a shuffle with one partition, pushes and commits some bytes; returns its location. */
    private static PartitionLocation writeShuffle(
            TransportClientFactory clients, MasterClient master, String app, int shuffle) throws RemoteException {
        master.ask(
                Request.newBuilder()
                        .setApplicationHeartbeat(
                                ApplicationHeartbeatRequest.newBuilder().setAppId(app)),
                Empty.parser(),
                10_000);
        List<PartitionLocation> locs = master.ask(
                        Request.newBuilder()
                                .setRequestSlots(RequestSlotsRequest.newBuilder()
                                        .setAppId(app)
                                        .setShuffleId(shuffle)
                                        .setNumPartitions(1)),
                        RequestSlotsResponse.parser(),
                        10_000)
                .getLocationsList();
        WorkerAddress w = locs.get(0).getWorker();
        TransportClient rpc = clients.client(w.getHost(), w.getRpcPort());
        ControlClient.ask(
                rpc,
                Request.newBuilder()
                        .setReserveSlots(ReserveSlotsRequest.newBuilder()
                                .setAppId(app)
                                .setShuffleId(shuffle)
                                .addAllLocations(locs)),
                Empty.parser());
        TransportClient.await(clients.client(w.getHost(), w.getPushPort())
                        .pushData(
                                ShuffleKey.of(app, shuffle),
                                0,
                                0,
                                new NettyManagedBuffer(Unpooled.wrappedBuffer(new byte[1000]))))
                .release();
        CommitFilesResponse r = ControlClient.ask(
                rpc,
                Request.newBuilder()
                        .setCommitFiles(CommitFilesRequest.newBuilder()
                                .setAppId(app)
                                .setShuffleId(shuffle)
                                .addAllLocations(locs)),
                CommitFilesResponse.parser());
        assertEquals(1, r.getCommittedCount());
        assertEquals(1000, r.getCommitted(0).getBytes());
        return locs.get(0);
    }

    private static Worker workerOf(MiniCluster cluster, WorkerAddress a) {
        for (Worker w : cluster.workers()) if (w.address().equals(a)) return w;
        throw new AssertionError("no worker at " + a);
    }

    @Test
    void expiredApplicationAndUnregisteredShuffleAreDeleted() throws Exception {
        try (MiniCluster cluster = new MiniCluster(1, 1, fastTimeouts());
                TransportClientFactory clients = cluster.clusterClients("test")) {
            MasterClient master = new MasterClient(clients, Collections.singletonList(cluster.masterEndpoint()));
            String key = ShuffleKey.of("app-expiring", 1);
            Worker worker;
            // The application beats while its shuffle is written and checked, so that a stall cannot expire it early.
            try (Heartbeats beats = new Heartbeats(master, "app-expiring")) {
                PartitionLocation loc = writeShuffle(clients, master, "app-expiring", 1);
                worker = workerOf(cluster, loc.getWorker());
                assertTrue(worker.registry().hasShuffle(key));
                assertEquals(1, cluster.dataFileCount());
            }

            // No more heartbeats from the application: the master expires it and the worker deletes its data.
            waitFor(
                    () -> !worker.registry().hasShuffle(key) && cluster.dataFileCount() == 0,
                    "the expired application's data is deleted");
            boolean stillKnown = cluster.master().state(s -> s.hasApplication("app-expiring"));
            assertFalse(stillKnown);

            // An unregistered shuffle of a live application is deleted too; the application's other shuffle stays.
            // It beats throughout, so that it does not expire (and lose its other shuffle) between the steps.
            try (Heartbeats beats = new Heartbeats(master, "app-live")) {
                writeShuffle(clients, master, "app-live", 1);
                writeShuffle(clients, master, "app-live", 2);
                master.ask(
                        Request.newBuilder()
                                .setUnregisterShuffle(UnregisterShuffleRequest.newBuilder()
                                        .setAppId("app-live")
                                        .setShuffleId(1)),
                        Empty.parser(),
                        10_000);
                // Its file goes on the disk's cleaner thread, after the registry forgets it.
                waitFor(
                        () -> {
                            heartbeat(master, "app-live");
                            return !worker.registry().hasShuffle(ShuffleKey.of("app-live", 1))
                                    && cluster.dataFileCount() == 1;
                        },
                        "the unregistered shuffle is deleted");
                assertTrue(worker.registry().hasShuffle(ShuffleKey.of("app-live", 2)));
            }
        }
    }

    /** An application's heartbeats, as its driver sends them, every 200 ms from a thread of their own until closed. */
    private static final class Heartbeats implements AutoCloseable {
        private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "test-app-heartbeats");
            t.setDaemon(true);
            return t;
        });

        Heartbeats(MasterClient master, String app) {
            timer.scheduleWithFixedDelay(
                    () -> {
                        try {
                            heartbeat(master, app);
                        } catch (RuntimeException | AssertionError e) {
                            // A missed beat is no failure of its own: the next one follows; keep the schedule.
                        }
                    },
                    0,
                    200,
                    TimeUnit.MILLISECONDS);
        }

        /** Stops the heartbeats; none is sent after this returns. */
        @Override
        public void close() throws InterruptedException {
            timer.shutdownNow();
            if (!timer.awaitTermination(30, TimeUnit.SECONDS)) {
                throw new AssertionError("the application heartbeats did not stop");
            }
        }
    }

    private static void heartbeat(MasterClient master, String app) {
        try {
            master.ask(
                    Request.newBuilder()
                            .setApplicationHeartbeat(
                                    ApplicationHeartbeatRequest.newBuilder().setAppId(app)),
                    Empty.parser(),
                    10_000);
        } catch (RemoteException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void lostWorkerGetsNoNewSlotsAndComesBackWhenItBeatsAgain() throws Exception {
        try (MiniCluster cluster = new MiniCluster(2, 1, fastTimeouts());
                TransportClientFactory clients = cluster.clusterClients("test")) {
            MasterClient master = new MasterClient(clients, Collections.singletonList(cluster.masterEndpoint()));
            Worker dying = cluster.workers().get(0);
            WorkerAddress survivor = cluster.workers().get(1).address();
            dying.close();
            waitFor(
                    () -> cluster.master().state(s -> s.workers().size()) == 1,
                    "the master declares the closed worker lost");
            List<PartitionLocation> locs = master.ask(
                            Request.newBuilder()
                                    .setRequestSlots(RequestSlotsRequest.newBuilder()
                                            .setAppId("app-after-loss")
                                            .setShuffleId(0)
                                            .setNumPartitions(10)),
                            RequestSlotsResponse.parser(),
                            10_000)
                    .getLocationsList();
            assertEquals(10, locs.size());
            for (PartitionLocation l : locs) assertEquals(survivor, l.getWorker(), "a slot on the lost worker");

            RemoteException e = assertThrows(
                    RemoteException.class,
                    () -> master.ask(
                            Request.newBuilder()
                                    .setRequestSlots(RequestSlotsRequest.newBuilder()
                                            .setAppId("app-after-loss")
                                            .setShuffleId(1)
                                            .setNumPartitions(0)),
                            RequestSlotsResponse.parser(),
                            10_000));
            assertTrue(e.getMessage().contains("need at least 1"), e.getMessage());
        }
    }
}
