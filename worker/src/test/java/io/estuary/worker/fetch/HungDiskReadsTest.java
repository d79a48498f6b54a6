package io.estuary.worker.fetch;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.OpenStreamRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.StreamHandle;
import io.estuary.common.status.StatusCode;
import io.estuary.common.util.ShuffleKey;
import io.estuary.network.client.ChunkReceivedCallback;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import io.estuary.network.rpc.RequestLimits;
import io.estuary.network.server.TransportServer;
import io.estuary.worker.partition.PartitionRegistry;
import io.estuary.worker.storage.CommittedFile;
import io.estuary.worker.storage.Disk;
import io.estuary.worker.storage.DiskHangInjection;
import io.estuary.worker.storage.StorageManager;
import io.netty.buffer.ByteBuf;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reads of committed files on a disk that hangs, on loopback with the worker's real storage, fetch handler and
 * transport (the disk hangs through the file-channel test hook; its reader pool has one thread; the test declares
 * the disk failed where the disk checker's probe would time out): a chunk read
 * blocked on the disk and a stream open queued behind it are answered {@code DISK_FAILED} as soon as the disk is
 * declared failed, long before the client's request timeout, while the other disk serves on; once the disk returns,
 * the open given up leaves no stream behind.
 */
class HungDiskReadsTest {
    private static final String APP = "app-hung-reads";
    private static final int CHUNK = 1000;
    private static final long WAIT_S = 30;

    @AfterEach
    void heal() {
        DiskHangInjection.healAll();
    }

    @Test
    void readsWaitingForAHungDiskAreAnsweredWhenItIsDeclaredFailed(@TempDir Path tmp) throws Exception {
        File dirA = tmp.resolve("disk-a").toFile();
        File dirB = tmp.resolve("disk-b").toFile();
        EstuaryConf conf = new EstuaryConf()
                .set(WorkerConfig.STORAGE_DIRS, dirA + "," + dirB)
                .set(WorkerConfig.FETCH_THREADS_PER_DISK, "1")
                .set(WorkerConfig.DISK_CHECK_INTERVAL, "1h") // the test declares the disk failed, as a probe would
                .set("estuary.network.rpc.timeout", "10min"); // an answer must come from the worker, not a timeout
        StorageManager storage = new StorageManager(conf);
        Disk hung = storage.disk(dirA.getAbsolutePath());
        Disk healthy = storage.disk(dirB.getAbsolutePath());
        String key = ShuffleKey.of(APP, 0);
        PartitionRegistry registry = new PartitionRegistry(storage);
        committed(registry, key, 0, hung, 5 * CHUNK, 1);
        byte[] onHealthy = committed(registry, key, 1, healthy, 4 * CHUNK, 2);

        FetchHandler handler = new FetchHandler(registry, storage.cache(), RequestLimits.DEFAULTS, 100, 600_000);
        TransportServer server = new TransportServer(conf, "test-fetch", "127.0.0.1", 0, handler);
        TransportClientFactory clients = new TransportClientFactory(conf, "test-fetch-client");
        try {
            TransportClient fetch = clients.client("127.0.0.1", server.port());
            StreamHandle h = ControlClient.ask(fetch, open(0), StreamHandle.parser());
            assertEquals(CHUNK, fetchChunk(fetch, h.getStreamId(), 0).get(WAIT_S, TimeUnit.SECONDS).length);

            DiskHangInjection.hang(dirA);
            CompletableFuture<byte[]> chunk = fetchChunk(fetch, h.getStreamId(), 1);
            waitFor(() -> hung.readers().pending() == 1, "the chunk read runs, blocked on the hung disk");
            CompletableFuture<StreamHandle> reopen = ControlClient.askAsync(fetch, open(0), StreamHandle.parser());
            waitFor(() -> hung.readers().queued() == 1, "the open waits behind it");
            assertArrayEquals(
                    onHealthy,
                    readAll(fetch, ControlClient.ask(fetch, open(1), StreamHandle.parser())),
                    "the other disk serves on");
            assertFalse(chunk.isDone() || reopen.isDone(), "both still wait for the hung disk");

            hung.markFailed("the disk probe did not finish (test): the disk hangs");
            assertEquals(StatusCode.DISK_FAILED, statusOf(chunk), "the running chunk read is answered");
            assertEquals(StatusCode.DISK_FAILED, statusOf(reopen), "the queued open is answered");
            assertEquals(2, hung.readers().givenUp());
            assertEquals(0, hung.readers().pending());
            assertEquals(
                    StatusCode.DISK_FAILED,
                    statusOf(ControlClient.askAsync(fetch, open(0), StreamHandle.parser())),
                    "a new open on the failed disk is refused");

            DiskHangInjection.heal(dirA);
            CountDownLatch drained = new CountDownLatch(1);
            hung.readers().execute(drained::countDown); // behind the read that hung and the open given up
            assertTrue(drained.await(WAIT_S, TimeUnit.SECONDS), "the disk's reader thread is free once it returns");
            assertEquals(0, handler.openStreams(), "no stream is left for the open given up, nor the failed read");
        } finally {
            DiskHangInjection.healAll();
            clients.close();
            server.close();
            handler.close();
            storage.close();
        }
    }

    private static StatusCode statusOf(CompletableFuture<?> f) throws Exception {
        try {
            f.get(WAIT_S, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            assertInstanceOf(RemoteException.class, e.getCause(), String.valueOf(e.getCause()));
            return ((RemoteException) e.getCause()).status();
        }
        return fail("expected a failure, got " + f.get());
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
        for (int i = 0; i < h.getNumChunks(); i++)
            out.write(fetchChunk(c, h.getStreamId(), i).get(WAIT_S, TimeUnit.SECONDS));
        return out.toByteArray();
    }

    private static CompletableFuture<byte[]> fetchChunk(TransportClient c, long stream, int index) {
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
        return f;
    }
}
