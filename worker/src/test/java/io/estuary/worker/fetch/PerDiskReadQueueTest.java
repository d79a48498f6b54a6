package io.estuary.worker.fetch;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.OpenStreamRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.StreamHandle;
import io.estuary.common.util.ShuffleKey;
import io.estuary.network.client.ChunkReceivedCallback;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import io.estuary.network.rpc.RequestLimits;
import io.estuary.network.server.TransportServer;
import io.estuary.worker.partition.PartitionRegistry;
import io.estuary.worker.storage.CommittedFile;
import io.estuary.worker.storage.Disk;
import io.estuary.worker.storage.StorageManager;
import io.netty.buffer.ByteBuf;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fetch server's per-disk read queues and asynchronous OpenStream, on loopback with the worker's real storage
 * (two disks, {@code estuary.worker.fetch.threadsPerDisk} reader threads each), fetch handler and transport: while
 * every reader thread of one disk hangs, a partition on the other disk opens and reads, a cached partition is served
 * from the same connection's event loop, and the open on the hung disk waits in that disk's queue; once the disk
 * answers again, the waiting open completes and its data reads back whole.
 */
class PerDiskReadQueueTest {
    private static final String APP = "app-disk-queues";
    private static final int CHUNK = 1000;
    private static final long WAIT_S = 30;

    @Test
    void aHungDiskStallsOnlyItsOwnReaders(@TempDir Path tmp) throws Exception {
        File dirA = tmp.resolve("disk-a").toFile();
        File dirB = tmp.resolve("disk-b").toFile();
        EstuaryConf conf = new EstuaryConf()
                .set(WorkerConfig.STORAGE_DIRS, dirA + "," + dirB)
                .set(WorkerConfig.FETCH_THREADS_PER_DISK, "2");
        StorageManager storage = new StorageManager(conf);
        Disk hung = storage.disk(dirA.getAbsolutePath());
        Disk healthy = storage.disk(dirB.getAbsolutePath());
        assertNotNull(hung, "disk mount points: " + storage.diskInfos());
        assertNotNull(healthy);
        String key = ShuffleKey.of(APP, 0);
        PartitionRegistry registry = new PartitionRegistry(storage);
        byte[] onHung = committed(registry, key, 0, hung, 5 * CHUNK, 1);
        byte[] onHealthy = committed(registry, key, 1, healthy, 4 * CHUNK, 2);
        byte[] cached = committed(registry, key, 2, hung, 2 * CHUNK, 3);
        CommittedFile cachedFile = registry.committedFile(key, 2, 0);
        assertTrue(storage.cache().startFill(key, cachedFile) && storage.cache().fill(cachedFile));

        FetchHandler handler = new FetchHandler(registry, storage.cache(), RequestLimits.DEFAULTS, 100, 600_000);
        TransportServer server = new TransportServer(conf, "test-fetch", "127.0.0.1", 0, handler);
        TransportClientFactory clients = new TransportClientFactory(conf, "test-fetch-client");
        CountDownLatch unblock = new CountDownLatch(1);
        try {
            TransportClient fetch = clients.client("127.0.0.1", server.port());
            // Every reader thread of disk A hangs, as on a disk that stopped answering.
            CountDownLatch hanging = new CountDownLatch(2);
            for (int i = 0; i < 2; i++) {
                hung.readers().execute(() -> {
                    hanging.countDown();
                    try {
                        unblock.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
            }
            assertTrue(hanging.await(WAIT_S, TimeUnit.SECONDS), "both reader threads of disk A are taken");

            CompletableFuture<StreamHandle> waiting = ControlClient.askAsync(fetch, open(0), StreamHandle.parser());
            waitFor(() -> hung.readers().queued() == 1, "the open of the partition on disk A waits in its queue");

            assertArrayEquals(
                    onHealthy,
                    readAll(fetch, ControlClient.ask(fetch, open(1), StreamHandle.parser())),
                    "the partition on disk B reads while disk A hangs");
            assertArrayEquals(
                    cached,
                    readAll(fetch, ControlClient.ask(fetch, open(2), StreamHandle.parser())),
                    "the cached partition (its file on disk A) is served from memory while disk A hangs");
            assertFalse(waiting.isDone(), "the open on disk A still waits");
            assertEquals(1, hung.readers().queued());

            unblock.countDown();
            StreamHandle h = waiting.get(WAIT_S, TimeUnit.SECONDS);
            assertEquals(5, h.getNumChunks());
            byte[] got = readAll(fetch, h);
            assertEquals(crc(onHung), crc(got), "disk A's partition reads back whole once the disk answers");
            assertArrayEquals(onHung, got);
        } finally {
            unblock.countDown();
            clients.close();
            server.close();
            handler.close();
            storage.close();
        }
    }

    /** Writes a partition file of {@code size} random bytes in chunks of {@link #CHUNK} and registers it committed. */
    private static byte[] committed(
            PartitionRegistry registry, String key, int partition, Disk disk, int size, long seed) throws Exception {
        byte[] data = new byte[size];
        new Random(seed).nextBytes(data);
        File f = new File(disk.dir(), partition + "-0.data");
        Files.write(f.toPath(), data);
        long[] offsets = new long[size / CHUNK];
        for (int i = 0; i < offsets.length; i++) offsets[i] = (long) i * CHUNK;
        registry.restoreCommitted(key, partition, 0, new CommittedFile(f, offsets, size, disk));
        return data;
    }

    private static Request.Builder open(int partition) {
        return Request.newBuilder()
                .setOpenStream(OpenStreamRequest.newBuilder()
                        .setAppId(APP)
                        .setShuffleId(0)
                        .setPartitionId(partition)
                        .setEpoch(0)
                        .setStartMap(0)
                        .setEndMap(Integer.MAX_VALUE));
    }

    private static byte[] readAll(TransportClient c, StreamHandle h) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < h.getNumChunks(); i++) out.write(fetchChunk(c, h.getStreamId(), i));
        return out.toByteArray();
    }

    private static byte[] fetchChunk(TransportClient c, long stream, int index) throws Exception {
        CompletableFuture<byte[]> f = new CompletableFuture<>();
        c.fetchChunk(stream, index, new ChunkReceivedCallback() {
            @Override
            public void onSuccess(int i, ByteBuf chunk) {
                byte[] b = new byte[chunk.readableBytes()];
                chunk.readBytes(b);
                chunk.release();
                f.complete(b);
            }

            @Override
            public void onFailure(int i, Throwable cause) {
                f.completeExceptionally(cause);
            }
        });
        return f.get(WAIT_S, TimeUnit.SECONDS);
    }

    private static long crc(byte[] b) {
        CRC32 c = new CRC32();
        c.update(b);
        return c.getValue();
    }
}
