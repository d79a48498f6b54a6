package io.estuary.worker.lifecycle;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.protocol.ApplicationHeartbeatRequest;
import io.estuary.common.protocol.CommitFilesRequest;
import io.estuary.common.protocol.CommitFilesResponse;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.OpenStreamRequest;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.ReserveSlotsRequest;
import io.estuary.common.protocol.StreamHandle;
import io.estuary.common.protocol.UnregisterShuffleRequest;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.util.ShuffleKey;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.client.ChunkReceivedCallback;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import io.estuary.network.rpc.MasterClient;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.zip.CRC32;

/**
 * One shuffle driven by hand over the wire, the way a driver and its tasks would: slots from the master, reserve,
 * pushes with known bytes (per partition: a byte count and a CRC32 of everything pushed, in order), commit, and
 * reading a partition back chunk by chunk.
 */
final class RawShuffle {
    final String app;
    final int shuffle;
    final List<PartitionLocation> locations;
    final long[] bytes;
    final CRC32[] crcs;
    private final TransportClientFactory clients;
    private final MasterClient master;
    private final Random random;

    RawShuffle(TransportClientFactory clients, MasterClient master, String app, int shuffle, int partitions)
            throws RemoteException {
        this.clients = clients;
        this.master = master;
        this.app = app;
        this.shuffle = shuffle;
        this.random = new Random(shuffle * 31L + partitions);
        master.ask(
                Request.newBuilder()
                        .setApplicationHeartbeat(
                                ApplicationHeartbeatRequest.newBuilder().setAppId(app)),
                Empty.parser(),
                10_000);
        this.locations = master.ask(
                        Request.newBuilder()
                                .setRequestSlots(RequestSlotsRequest.newBuilder()
                                        .setAppId(app)
                                        .setShuffleId(shuffle)
                                        .setNumPartitions(partitions)),
                        RequestSlotsResponse.parser(),
                        10_000)
                .getLocationsList();
        this.bytes = new long[partitions];
        this.crcs = new CRC32[partitions];
        for (int p = 0; p < partitions; p++) crcs[p] = new CRC32();
        for (PartitionLocation l : locations) {
            ControlClient.ask(
                    rpc(l.getWorker()),
                    Request.newBuilder()
                            .setReserveSlots(ReserveSlotsRequest.newBuilder()
                                    .setAppId(app)
                                    .setShuffleId(shuffle)
                                    .addLocations(l)),
                    Empty.parser());
        }
    }

    String key() {
        return ShuffleKey.of(app, shuffle);
    }

    private TransportClient rpc(WorkerAddress w) throws RemoteException {
        return clients.client(w.getHost(), w.getRpcPort());
    }

    /** Pushes {@code n} pushes of 1 to 3000 random bytes to every partition; each is acknowledged before the next. */
    void push(int n) throws RemoteException {
        for (int i = 0; i < n; i++) {
            for (PartitionLocation l : locations) {
                byte[] data = new byte[1 + random.nextInt(3000)];
                random.nextBytes(data);
                WorkerAddress w = l.getWorker();
                TransportClient.await(clients.client(w.getHost(), w.getPushPort())
                                .pushData(
                                        key(),
                                        l.getPartitionId(),
                                        l.getEpoch(),
                                        new NettyManagedBuffer(Unpooled.wrappedBuffer(data))))
                        .release();
                bytes[l.getPartitionId()] += data.length;
                crcs[l.getPartitionId()].update(data);
            }
        }
    }

    /** Asks the partition's worker to commit it. */
    CommitFilesResponse commit(PartitionLocation l) throws RemoteException {
        return ControlClient.ask(
                rpc(l.getWorker()),
                Request.newBuilder()
                        .setCommitFiles(CommitFilesRequest.newBuilder()
                                .setAppId(app)
                                .setShuffleId(shuffle)
                                .addLocations(l)),
                CommitFilesResponse.parser());
    }

    /** Commits a partition and checks the worker reports all its bytes. */
    void commitAndCheck(PartitionLocation l) throws RemoteException {
        CommitFilesResponse r = commit(l);
        assertEquals(1, r.getCommittedCount(), "partition " + l.getPartitionId() + ": " + r.getFailureReason());
        assertEquals(bytes[l.getPartitionId()], r.getCommitted(0).getBytes());
    }

    /** Reads a committed partition back and checks its length and CRC32 against what was pushed. */
    void readAndCheck(PartitionLocation l) throws Exception {
        TransportClient fetch = fetchClient(l);
        StreamHandle h = open(fetch, l, 0);
        CRC32 crc = new CRC32();
        long n = 0;
        for (int c = 0; c < h.getNumChunks(); c++) {
            CompletableFuture<ByteBuf> chunk = new CompletableFuture<>();
            fetch.fetchChunk(h.getStreamId(), c, new ChunkReceivedCallback() {
                @Override
                public void onSuccess(int index, ByteBuf buf) {
                    if (!chunk.complete(buf)) buf.release(); // the callback hands the chunk over
                }

                @Override
                public void onFailure(int index, Throwable cause) {
                    chunk.completeExceptionally(cause);
                }
            });
            ByteBuf buf = chunk.get();
            try {
                byte[] b = new byte[buf.readableBytes()];
                buf.readBytes(b);
                crc.update(b);
                n += b.length;
            } finally {
                buf.release();
            }
        }
        assertEquals(bytes[l.getPartitionId()], n, "bytes of partition " + l.getPartitionId());
        assertEquals(bytes[l.getPartitionId()], h.getTotalBytes());
        assertEquals(crcs[l.getPartitionId()].getValue(), crc.getValue(), "CRC32 of partition " + l.getPartitionId());
    }

    /**
     * Opens a committed partition allowing {@code inlineMaxBytes} inline and checks what comes back against what was
     * pushed: the bytes themselves in the answer (no stream) when they are that few, else a stream read as
     * {@link #readAndCheck} does. Returns whether they came inline.
     */
    boolean readInlineAndCheck(PartitionLocation l, int inlineMaxBytes) throws Exception {
        TransportClient fetch = fetchClient(l);
        StreamHandle h = open(fetch, l, inlineMaxBytes);
        long expected = bytes[l.getPartitionId()];
        long allowed = Math.min(inlineMaxBytes, 1 << 20); // the worker's own cap, whatever a reader asks
        assertEquals(expected, h.getTotalBytes());
        if (h.getInlineData().isEmpty()) {
            assertTrue(expected > allowed, "partition " + l.getPartitionId() + " of " + expected + " bytes");
            fetch.closeStream(h.getStreamId());
            readAndCheck(l);
            return false;
        }
        assertTrue(expected <= allowed, "inline: " + expected + " bytes, allowed " + allowed);
        assertEquals(-1, h.getStreamId(), "no stream opened for inline bytes");
        assertEquals(1, h.getNumChunks());
        CRC32 crc = new CRC32();
        crc.update(h.getInlineData().toByteArray());
        assertEquals(expected, h.getInlineData().size(), "bytes of partition " + l.getPartitionId());
        assertEquals(crcs[l.getPartitionId()].getValue(), crc.getValue(), "CRC32 of partition " + l.getPartitionId());
        return true;
    }

    private TransportClient fetchClient(PartitionLocation l) throws RemoteException {
        WorkerAddress w = l.getWorker();
        return clients.client(w.getHost(), w.getFetchPort());
    }

    /** Opens a committed partition's stream, allowing {@code inlineMaxBytes} to come back inline (0: none). */
    private StreamHandle open(TransportClient fetch, PartitionLocation l, int inlineMaxBytes) throws RemoteException {
        return ControlClient.ask(
                fetch,
                Request.newBuilder()
                        .setOpenStream(OpenStreamRequest.newBuilder()
                                .setAppId(app)
                                .setShuffleId(shuffle)
                                .setPartitionId(l.getPartitionId())
                                .setEpoch(l.getEpoch())
                                .setInlineMaxBytes(inlineMaxBytes)),
                StreamHandle.parser());
    }

    void unregister() throws RemoteException {
        master.ask(
                Request.newBuilder()
                        .setUnregisterShuffle(UnregisterShuffleRequest.newBuilder()
                                .setAppId(app)
                                .setShuffleId(shuffle)),
                Empty.parser(),
                10_000);
    }
}
