package io.estuary.worker.push;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.LocationRole;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.common.util.ShuffleKey;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.protocol.Message;
import io.estuary.network.protocol.PushData;
import io.estuary.network.protocol.PushMergedData;
import io.estuary.network.protocol.RpcFailure;
import io.estuary.network.protocol.RpcResponse;
import io.estuary.worker.partition.PartitionRegistry;
import io.estuary.worker.storage.CommittedFile;
import io.estuary.worker.storage.StorageManager;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link PushHandler} behind the push port's real pipeline on {@link io.netty.channel.embedded.EmbeddedChannel}s,
 * with a real registry and storage on a temporary directory. Every test ends by releasing everything the channels
 * hold and checking that each pushed buffer was released and the memory tracker is back to zero.
 */
class PushHandlerPipelineTest {
    private static final String APP = "app-embedded";
    private static final int SHUFFLE = 7;
    private static final String KEY = ShuffleKey.of(APP, SHUFFLE);
    private static final long SOFT_SPLIT = 64 << 10;
    private static final long HARD_SPLIT = 96 << 10;

    private Path dir;
    private StorageManager storage;
    private PartitionRegistry registry;
    private CongestionControl congestion;
    private Replicator replicator;
    private PushHandler handler;
    private final List<EmbeddedPushPort> ports = new ArrayList<>();
    private final List<ByteBuf> pushed = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        dir = Files.createTempDirectory("estuary-push-pipeline");
        EstuaryConf conf = new EstuaryConf()
                .set(WorkerConfig.STORAGE_DIRS, dir.toString())
                .set(WorkerConfig.DISK_RESERVE, "0")
                .set(WorkerConfig.MAX_BUFFERED_BYTES, "1m")
                .set(WorkerConfig.FLUSH_BUFFER_SIZE, "4m")
                .set(WorkerConfig.FLUSH_MAX_AGE, "1h");
        storage = new StorageManager(conf);
        registry = new PartitionRegistry(storage);
        congestion = new CongestionControl(conf, storage.memory());
        replicator = new Replicator(new TransportClientFactory(conf, "test-replicate"), (b, n, ok) -> {});
        handler = new PushHandler(registry, storage.memory(), replicator, congestion, SOFT_SPLIT, HARD_SPLIT);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (EmbeddedPushPort p : ports) p.close();
        registry.remove(KEY);
        replicator.close();
        congestion.close();
        storage.close();
        for (ByteBuf b : pushed) assertEquals(0, b.refCnt(), "a pushed buffer was not released");
        assertEquals(0, storage.memory().held(), "memory still counted as held");
        // The storage's cleaner may still be deleting a removed shuffle's files: a file gone mid-walk is retried.
        for (int attempt = 0; ; attempt++) {
            try (Stream<Path> s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                return;
            } catch (java.io.UncheckedIOException e) {
                if (attempt == 5) throw e;
            }
        }
    }

    private EmbeddedPushPort connect() {
        EmbeddedPushPort p = new EmbeddedPushPort(handler);
        ports.add(p);
        return p;
    }

    private void reserve(int partition, int epoch, LocationRole role) {
        WorkerAddress self = WorkerAddress.newBuilder()
                .setHost("127.0.0.1")
                .setRpcPort(1)
                .setPushPort(2)
                .setFetchPort(3)
                .build();
        registry.reserve(
                APP,
                SHUFFLE,
                List.of(PartitionLocation.newBuilder()
                        .setPartitionId(partition)
                        .setEpoch(epoch)
                        .setRole(role)
                        .setWorker(self)
                        .build()));
    }

    /** A pooled direct buffer of {@code n} bytes of {@code seed}, remembered to check it is released. */
    private ByteBuf data(int n, int seed) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(n);
        for (int i = 0; i < n; i++) b.writeByte(seed + i * 31);
        pushed.add(b);
        return b;
    }

    private static PushData push(long id, int partition, int epoch, boolean forwarded, ByteBuf body) {
        return new PushData(id, KEY, partition, epoch, forwarded, new NettyManagedBuffer(body));
    }

    /** The acknowledgement's status bytes (empty: all OK); fails on a refusal. */
    private static byte[] ack(Message m, long requestId) {
        if (m instanceof RpcFailure) fail("refused: " + ((RpcFailure) m).status + " " + ((RpcFailure) m).error);
        RpcResponse r = assertInstanceOf(RpcResponse.class, m);
        assertEquals(requestId, r.requestId);
        ByteBuf body = ((NettyManagedBuffer) r.body()).buf();
        byte[] out = new byte[body.readableBytes()];
        body.readBytes(out);
        r.body().release();
        return out;
    }

    private static RpcFailure refusal(Message m, long requestId, StatusCode status) {
        RpcFailure f = assertInstanceOf(RpcFailure.class, m, () -> "expected a refusal, got " + m);
        assertEquals(requestId, f.requestId);
        assertEquals(status, f.status, f.error);
        return f;
    }

    @Test
    void pushesAreAcknowledgedAndCommittedInOrder() throws Exception {
        reserve(0, 0, LocationRole.PRIMARY);
        reserve(1, 0, LocationRole.PRIMARY);
        EmbeddedPushPort port = connect();
        CRC32 expected0 = new CRC32();
        CRC32 expected1 = new CRC32();
        long bytes0 = 0;
        for (int i = 0; i < 20; i++) {
            ByteBuf b = data(100 + i, i);
            byte[] copy = new byte[b.readableBytes()];
            b.getBytes(0, copy);
            expected0.update(copy);
            bytes0 += copy.length;
            port.send(push(i, 0, 0, false, b));
            assertArrayEquals(new byte[0], ack(port.reply(), i));
        }
        // A merged push: partition 1 gets 300 bytes, partition 0 gets 200 more.
        ByteBuf merged = data(500, 99);
        byte[] all = new byte[500];
        merged.getBytes(0, all);
        expected1.update(all, 0, 300);
        expected0.update(all, 300, 200);
        bytes0 += 200;
        port.send(new PushMergedData(
                1000, KEY, new int[] {1, 0}, new int[] {0, 0}, new int[] {0, 300}, new NettyManagedBuffer(merged)));
        assertArrayEquals(new byte[0], ack(port.reply(), 1000));
        assertNull(port.reply(), "one answer per push");

        CommittedFile f0 = registry.writer(KEY, 0, 0).commit().get();
        CommittedFile f1 = registry.writer(KEY, 1, 0).commit().get();
        assertEquals(bytes0, f0.length());
        assertEquals(300, f1.length());
        assertEquals(expected0.getValue(), crc(f0));
        assertEquals(expected1.getValue(), crc(f1));
    }

    private static long crc(CommittedFile f) throws Exception {
        CRC32 c = new CRC32();
        c.update(Files.readAllBytes(f.file().toPath()));
        return c.getValue();
    }

    @Test
    void anUnknownLocationIsRefusedAndItsBufferReleased() {
        reserve(0, 0, LocationRole.PRIMARY);
        EmbeddedPushPort port = connect();
        port.send(push(1, 0, 5, false, data(64, 1)));
        RpcFailure f = refusal(port.reply(), 1, StatusCode.UNKNOWN_LOCATION);
        assertTrue(f.error.contains("epoch 5"), f.error);
        // A merged push with one unknown location writes nothing at all.
        port.send(new PushMergedData(
                2, KEY, new int[] {0, 3}, new int[] {0, 0}, new int[] {0, 10}, new NettyManagedBuffer(data(20, 2))));
        refusal(port.reply(), 2, StatusCode.UNKNOWN_LOCATION);
        assertEquals(0, registry.writer(KEY, 0, 0).size());
        assertTrue(port.server.isActive(), "a refusal does not close the connection");
    }

    @Test
    void pastTheSoftSplitTheAckSaysSoAndPastTheHardSplitPushesAreRefused() {
        reserve(0, 0, LocationRole.PRIMARY);
        EmbeddedPushPort port = connect();
        port.send(push(1, 0, 0, false, data(40 << 10, 1)));
        assertArrayEquals(new byte[0], ack(port.reply(), 1));
        port.send(push(2, 0, 0, false, data(40 << 10, 2))); // 80 KiB: past the soft split
        assertArrayEquals(new byte[] {StatusCode.SOFT_SPLIT.id()}, ack(port.reply(), 2));
        port.send(push(3, 0, 0, false, data(40 << 10, 3))); // would pass the hard split
        refusal(port.reply(), 3, StatusCode.HARD_SPLIT);
        assertEquals(80 << 10, registry.writer(KEY, 0, 0).size());
    }

    @Test
    void aMalformedFrameClosesOnlyItsConnectionAndSaysWhy() {
        reserve(0, 0, LocationRole.PRIMARY);
        EmbeddedPushPort bad = connect();
        EmbeddedPushPort good = connect();
        // A PUSH_DATA frame of 3 bytes: too short for its header.
        ByteBuf frame =
                Unpooled.buffer().writeInt(4).writeByte(pushDataTypeId()).writeBytes(new byte[] {1, 2, 3});
        bad.sendRaw(frame);
        RpcFailure f = refusal(bad.reply(), RpcFailure.CONNECTION_ERROR, StatusCode.BAD_REQUEST);
        assertTrue(f.error.contains("truncated PUSH_DATA frame"), f.error);
        assertFalse(bad.server.isOpen(), "the connection is closed");

        good.send(push(1, 0, 0, false, data(64, 1)));
        assertArrayEquals(new byte[0], ack(good.reply(), 1));
        assertTrue(good.server.isActive());
    }

    @Test
    void aMergedPushPastTheEntryCapIsRefusedAndTheWorkerServesOn() {
        reserve(0, 0, LocationRole.PRIMARY);
        EmbeddedPushPort bad = connect();
        EmbeddedPushPort good = connect();
        int over = PushMergedData.MAX_ENTRIES + 1;
        bad.send(merged(1, over));
        RpcFailure f = refusal(bad.reply(), RpcFailure.CONNECTION_ERROR, StatusCode.BAD_REQUEST);
        assertTrue(
                f.error.contains(over + " partitions: a merged push carries at most " + PushMergedData.MAX_ENTRIES),
                f.error);
        assertFalse(bad.server.isOpen(), "the connection is closed");
        assertEquals(0, registry.writer(KEY, 0, 0).size(), "nothing of the refused push was written");

        good.send(merged(2, PushMergedData.MAX_ENTRIES)); // at the cap: every entry is taken
        ack(good.reply(), 2);
        assertEquals(PushMergedData.MAX_ENTRIES, registry.writer(KEY, 0, 0).size());
        assertTrue(good.server.isActive());
    }

    /** A merged push of {@code entries} one-byte pieces, all for partition 0 epoch 0. */
    private PushMergedData merged(long id, int entries) {
        int[] offsets = new int[entries];
        for (int i = 0; i < entries; i++) offsets[i] = i;
        return new PushMergedData(
                id, KEY, new int[entries], new int[entries], offsets, new NettyManagedBuffer(data(entries, (int) id)));
    }

    @Test
    void unknownHeaderFlagsAreAMalformedFrame() {
        reserve(0, 0, LocationRole.PRIMARY);
        EmbeddedPushPort port = connect();
        byte[] key = KEY.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        ByteBuf frame = Unpooled.buffer();
        frame.writeInt(1 + 8 + 4 + key.length + 8 + 1 + 4)
                .writeByte(pushDataTypeId())
                .writeLong(1)
                .writeInt(key.length)
                .writeBytes(key)
                .writeInt(0)
                .writeInt(0)
                .writeByte(0x80)
                .writeInt(42);
        port.sendRaw(frame);
        RpcFailure f = refusal(port.reply(), RpcFailure.CONNECTION_ERROR, StatusCode.BAD_REQUEST);
        assertTrue(f.error.contains("unknown flags 0x80"), f.error);
        assertEquals(0, registry.writer(KEY, 0, 0).size());
    }

    private static byte pushDataTypeId() {
        return io.estuary.network.protocol.MessageType.PUSH_DATA.id();
    }

    @Test
    void aReplicaCopyTakesOnlyForwardedPushesAndAPrimaryOnlyDirectOnes() {
        reserve(0, 0, LocationRole.REPLICA);
        reserve(1, 0, LocationRole.PRIMARY);
        EmbeddedPushPort port = connect();

        port.send(push(1, 0, 0, false, data(64, 1))); // a client writing the replica alone
        RpcFailure f = refusal(port.reply(), 1, StatusCode.UNKNOWN_LOCATION);
        assertTrue(f.error.contains("replica copy"), f.error);
        port.send(new PushMergedData(
                2, KEY, new int[] {1, 0}, new int[] {0, 0}, new int[] {0, 10}, new NettyManagedBuffer(data(20, 2))));
        refusal(port.reply(), 2, StatusCode.UNKNOWN_LOCATION);

        port.send(push(3, 1, 0, true, data(64, 3))); // a forward into a primary
        f = refusal(port.reply(), 3, StatusCode.UNKNOWN_LOCATION);
        assertTrue(f.error.contains("not a replica copy"), f.error);
        assertEquals(0, registry.writer(KEY, 0, 0).size());
        assertEquals(0, registry.writer(KEY, 1, 0).size());

        port.send(push(4, 0, 0, true, data(64, 4))); // the primary's worker forwarding
        assertArrayEquals(new byte[0], ack(port.reply(), 4));
        port.send(new PushMergedData(
                5, KEY, new int[] {0}, new int[] {0}, new int[] {0}, true, new NettyManagedBuffer(data(30, 5))));
        assertArrayEquals(new byte[0], ack(port.reply(), 5));
        assertEquals(94, registry.writer(KEY, 0, 0).size());
    }

    @Test
    void readsPauseAboveTheWatermarkAndResumeOnceFlushed() throws Exception {
        for (int p = 0; p < 16; p++) reserve(p, 0, LocationRole.PRIMARY);
        EmbeddedPushPort port = connect();
        assertTrue(port.server.config().isAutoRead());
        long id = 0;
        // Flush buffers hold 4 MiB before writing, so pushed data stays in memory: 1 MiB is the limit, and 16
        // partitions of 64 KiB (below the hard split) reach it.
        while (port.server.config().isAutoRead()) {
            assertTrue(id < 80, "reads never paused; " + storage.memory().held() + " bytes held");
            port.send(push(id, (int) (id % 16), 0, false, data(16 << 10, (int) id)));
            byte[] statuses = ack(port.reply(), id); // what was read is still taken and acknowledged
            assertTrue(statuses.length == 0 || statuses[0] == StatusCode.SOFT_SPLIT.id());
            id++;
        }
        // The flusher starts draining the largest buffers the moment the level rises, so what is held now may
        // already be lower; the peak is what crossed the watermark.
        assertTrue(storage.memory().peak() > (1 << 20) * 0.85, storage.memory().peak() + " bytes at the peak");
        assertTrue(storage.memory().pauses() >= 1);
        // (The flusher may already have brought the level back down, so the connection may have resumed.)

        for (int p = 0; p < 16; p++) registry.writer(KEY, p, 0).commit().get(); // written: the memory is free again
        waitFor(() -> port.server.config().isAutoRead(), 30_000, "reads resume");
        assertEquals(0, storage.memory().held());
    }

    @Test
    void closingTheRegistryFreesWhatUncommittedWritersBuffer() {
        reserve(0, 0, LocationRole.PRIMARY);
        EmbeddedPushPort port = connect();
        port.send(push(1, 0, 0, false, data(1000, 1)));
        assertArrayEquals(new byte[0], ack(port.reply(), 1));
        assertTrue(storage.memory().held() > 0);
        registry.close(); // the worker closing without committing
        assertEquals(0, storage.memory().held());
        port.send(push(2, 0, 0, false, data(10, 2)));
        refusal(port.reply(), 2, StatusCode.HARD_SPLIT);
        assertTrue(
                registry.writer(KEY, 0, 0).commit().isCompletedExceptionally(),
                "a commit after bytes were dropped must not look complete");
    }
}
