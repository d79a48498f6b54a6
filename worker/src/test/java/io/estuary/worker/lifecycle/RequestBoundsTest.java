package io.estuary.worker.lifecycle;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.OpenStreamRequest;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.ReserveSlotsRequest;
import io.estuary.common.protocol.StreamHandle;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.network.client.ChunkReceivedCallback;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import io.estuary.network.rpc.MasterClient;
import io.estuary.worker.MiniCluster;
import io.netty.buffer.ByteBuf;
import java.util.Collections;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Oversized requests to a real master and worker: each is refused with BAD_REQUEST (or RETRY_LATER for a reader
 * holding too many streams) and a message naming the limit and its key, and the same servers, over the same
 * connections, then serve a whole shuffle whose bytes and CRC32 match what was pushed.
 */
class RequestBoundsTest {
    static MiniCluster cluster;
    static TransportClientFactory clients;
    static MasterClient master;

    @BeforeAll
    static void start() throws Exception {
        // Permissive: the test sends an application's requests by hand, never registering its secret.
        EstuaryConf conf = new EstuaryConf()
                .set(io.estuary.common.config.AuthConfig.MODE, "permissive")
                .set(NetworkConfig.MAX_PARTITIONS, "1000")
                .set(NetworkConfig.MAX_LIST_ENTRIES, "50")
                .set(WorkerConfig.MAX_STREAMS_PER_CONNECTION, "2");
        cluster = new MiniCluster(1, 1, conf);
        clients = cluster.clusterClients("bounds-test");
        master = new MasterClient(clients, Collections.singletonList(cluster.masterEndpoint()));
    }

    @AfterAll
    static void stop() throws Exception {
        if (clients != null) clients.close();
        if (cluster != null) cluster.close();
    }

    private static String repeat(char c, int n) {
        StringBuilder b = new StringBuilder(n);
        for (int i = 0; i < n; i++) b.append(c);
        return b.toString();
    }

    @Test
    void masterRefusesTooLongAppIdsAndTooManyPartitions() throws Exception {
        RemoteException e = assertThrows(
                RemoteException.class,
                () -> master.ask(
                        Request.newBuilder()
                                .setRequestSlots(RequestSlotsRequest.newBuilder()
                                        .setAppId(repeat('x', 2000))
                                        .setShuffleId(0)
                                        .setNumPartitions(2)),
                        RequestSlotsResponse.parser(),
                        10_000));
        assertEquals(StatusCode.BAD_REQUEST, e.status());
        assertTrue(
                e.getMessage()
                        .contains("master refuses the request: request_slots.app_id is a string of 2000 "
                                + "bytes, more than estuary.network.request.maxStringBytes (1024) allows"),
                e.getMessage());

        e = assertThrows(
                RemoteException.class,
                () -> master.ask(
                        Request.newBuilder()
                                .setRequestSlots(RequestSlotsRequest.newBuilder()
                                        .setAppId("app-bounds")
                                        .setShuffleId(0)
                                        .setNumPartitions(1001)),
                        RequestSlotsResponse.parser(),
                        10_000));
        assertEquals(StatusCode.BAD_REQUEST, e.status());
        assertTrue(
                e.getMessage()
                        .contains("request_slots.num_partitions is 1001, more than "
                                + "estuary.network.request.maxPartitions (1000) allows"),
                e.getMessage());

        RawShuffle s = new RawShuffle(clients, master, "app-bounds", 1, 3);
        s.push(3);
        for (PartitionLocation l : s.locations) s.commitAndCheck(l);
        for (PartitionLocation l : s.locations) s.readAndCheck(l);
        s.unregister();
    }

    @Test
    void workerRefusesTooManyLocationsInOneRequest() throws Exception {
        RawShuffle s = new RawShuffle(clients, master, "app-locations", 2, 2);
        WorkerAddress w = s.locations.get(0).getWorker();
        ReserveSlotsRequest.Builder tooMany =
                ReserveSlotsRequest.newBuilder().setAppId("app-locations").setShuffleId(3);
        for (int p = 0; p < 51; p++) {
            tooMany.addLocations(s.locations.get(0).toBuilder().setPartitionId(p));
        }
        TransportClient rpc = clients.client(w.getHost(), w.getRpcPort());
        RemoteException e = assertThrows(
                RemoteException.class,
                () -> ControlClient.ask(rpc, Request.newBuilder().setReserveSlots(tooMany), Empty.parser()));
        assertEquals(StatusCode.BAD_REQUEST, e.status());
        assertTrue(
                e.getMessage()
                        .contains("worker refuses the request: reserve_slots.locations has too many entries, more "
                                + "than estuary.network.request.maxListEntries (50) allows"),
                e.getMessage());

        s.push(2);
        for (PartitionLocation l : s.locations) s.commitAndCheck(l);
        for (PartitionLocation l : s.locations) s.readAndCheck(l);
        s.unregister();
    }

    @Test
    void readerConnectionHoldsAtMostTheConfiguredStreams() throws Exception {
        RawShuffle s = new RawShuffle(clients, master, "app-streams", 4, 3);
        s.push(2);
        for (PartitionLocation l : s.locations) s.commitAndCheck(l);
        WorkerAddress w = s.locations.get(0).getWorker();
        TransportClient fetch = clients.client(w.getHost(), w.getFetchPort());
        StreamHandle first = open(fetch, s, s.locations.get(0));
        open(fetch, s, s.locations.get(1));
        RemoteException e = assertThrows(RemoteException.class, () -> open(fetch, s, s.locations.get(2)));
        assertEquals(StatusCode.RETRY_LATER, e.status());
        assertTrue(
                e.getMessage()
                        .contains("already has 2 streams open, the most "
                                + "estuary.worker.fetch.maxStreamsPerConnection allows"),
                e.getMessage());

        // Reading the first stream to its end gives its place back: the same connection reads the rest.
        for (int c = 0; c < first.getNumChunks(); c++)
            fetchChunk(fetch, first.getStreamId(), c).release();
        s.readAndCheck(s.locations.get(2));
        s.unregister();
    }

    private static StreamHandle open(TransportClient fetch, RawShuffle s, PartitionLocation l) throws RemoteException {
        return ControlClient.ask(
                fetch,
                Request.newBuilder()
                        .setOpenStream(OpenStreamRequest.newBuilder()
                                .setAppId(s.app)
                                .setShuffleId(s.shuffle)
                                .setPartitionId(l.getPartitionId())
                                .setEpoch(l.getEpoch())),
                StreamHandle.parser());
    }

    private static ByteBuf fetchChunk(TransportClient fetch, long stream, int chunk) throws Exception {
        CompletableFuture<ByteBuf> f = new CompletableFuture<>();
        fetch.fetchChunk(stream, chunk, new ChunkReceivedCallback() {
            @Override
            public void onSuccess(int index, ByteBuf buf) {
                if (!f.complete(buf)) buf.release();
            }

            @Override
            public void onFailure(int index, Throwable cause) {
                f.completeExceptionally(cause);
            }
        });
        return f.get(30, TimeUnit.SECONDS);
    }
}
