package io.estuary.worker.storage;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One partition's writer on a temporary disk: what it writes, where chunks start, and that its memory is counted
 * and given back on every path (commit, destroy, close), with every appended buffer released.
 */
class PartitionFileWriterTest {
    private Path dir;
    private Disk disk;
    private MemoryTracker memory;
    private final List<ByteBuf> appended = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        dir = Files.createTempDirectory("estuary-writer");
        disk = new Disk(dir.toFile(), 2, 1);
        memory = new MemoryTracker(64 << 20);
    }

    @AfterEach
    void tearDown() {
        disk.close();
        for (ByteBuf b : appended) assertEquals(0, b.refCnt(), "an appended buffer was not released");
        assertEquals(0, memory.held(), "memory still counted as held");
        StorageManager.deleteTree(dir);
    }

    private PartitionFileWriter writer(long flushThreshold, long chunkSize) {
        return new PartitionFileWriter(
                "test partition", new File(dir.toFile(), "0-0.data"), disk, memory, flushThreshold, chunkSize);
    }

    private ByteBuf data(byte[] bytes) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length).writeBytes(bytes);
        appended.add(b);
        return b;
    }

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) b[i] = (byte) (seed * 7 + i);
        return b;
    }

    /** A push of {@code batches} batches of {@code records} records and {@code dataLength} data bytes each. */
    private static byte[] batches(int batches, int records, int dataLength, int seed) {
        java.nio.ByteBuffer b =
                java.nio.ByteBuffer.allocate(batches * (io.estuary.common.util.BatchLayout.HEADER_SIZE + dataLength));
        for (int i = 0; i < batches; i++) {
            int at = b.position();
            b.put(bytes(io.estuary.common.util.BatchLayout.HEADER_SIZE + dataLength, seed + i));
            b.putInt(at + io.estuary.common.util.BatchLayout.MAP_ID, seed);
            b.putInt(at + io.estuary.common.util.BatchLayout.DATA_LENGTH, dataLength);
            b.putInt(at + io.estuary.common.util.BatchLayout.RECORDS, records);
        }
        return b.array();
    }

    /**
     * The file is created when the first bytes arrive, before any flush (the commit then only opens it); a writer
     * that takes nothing creates nothing, and a deleted one is not created again by a creation still queued.
     */
    @Test
    void theFileIsCreatedAheadOfItsFirstFlushOnlyOnceDataArrives() throws Exception {
        File f = new File(dir.toFile(), "0-0.data");
        PartitionFileWriter w = writer(64 << 10, 1 << 20);
        assertFalse(f.exists(), "no data, no file");
        byte[] b = batches(1, 3, 100, 1);
        w.append(data(b));
        assertEquals(b.length, w.bufferedBytes(), "below the flush threshold: buffered, no flush queued");
        waitFor(f::exists, "the file created ahead of its flush");
        assertEquals(0, f.length());
        CommittedFile c = w.commit().get();
        assertEquals(b.length, c.length());
        assertEquals(b.length, f.length());

        File other = new File(dir.toFile(), "1-0.data");
        PartitionFileWriter empty = new PartitionFileWriter("empty partition", other, disk, memory, 64 << 10, 1 << 20);
        assertEquals(0, empty.commit().get().length());
        assertFalse(other.exists(), "a partition that took nothing creates no file");
        empty.destroy();

        w.destroy();
        waitFor(() -> !f.exists(), "the deleted file gone");
    }

    @Test
    void theCommittedFileCarriesItsBatchAndRecordCountsAndTheChecksumOfItsBytes() throws Exception {
        PartitionFileWriter w = writer(4 << 10, 10 << 10); // many flushes, on several flusher threads
        long batchCount = 0;
        long recordCount = 0;
        for (int i = 0; i < 40; i++) {
            int n = 1 + i % 5;
            w.append(data(batches(n, 3 + i, 100 + 31 * i, i)));
            batchCount += n;
            recordCount += (long) n * (3 + i);
        }
        CommittedFile f = w.commit().get();
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(Files.readAllBytes(f.file().toPath()));
        assertEquals(new FileContents(batchCount, recordCount, crc.getValue()), f.contents());
    }

    @Test
    void aPushThatIsNotWholeBatchesLeavesTheCountsUnknownButNotTheChecksum() throws Exception {
        PartitionFileWriter w = writer(4 << 10, 10 << 10);
        w.append(data(batches(2, 7, 50, 1)));
        w.append(data(bytes(10, 3))); // shorter than a header
        w.append(data(batches(2, 7, 50, 2)));
        CommittedFile f = w.commit().get();
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(Files.readAllBytes(f.file().toPath()));
        assertEquals(new FileContents(FileContents.UNKNOWN, FileContents.UNKNOWN, crc.getValue()), f.contents());
    }

    @Test
    void appendsLandInOrderAcrossFlushesAndChunksStartBetweenPushes() throws Exception {
        // Flushes every 8 KiB by several threads; chunks of about 10 KiB.
        PartitionFileWriter w = writer(8 << 10, 10 << 10);
        java.io.ByteArrayOutputStream expected = new java.io.ByteArrayOutputStream();
        List<Long> pushStarts = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            byte[] b = bytes(1000 + 97 * i, i);
            pushStarts.add((long) expected.size());
            expected.write(b);
            w.append(data(b));
        }
        assertEquals(expected.size(), w.size());
        CommittedFile f = w.commit().get();
        assertSame(f, w.commit().get(), "committing again gives the same file");
        assertArrayEquals(expected.toByteArray(), Files.readAllBytes(f.file().toPath()));
        assertEquals(expected.size(), f.length());
        assertEquals(0, f.chunkOffset(0));
        long covered = 0;
        for (int i = 0; i < f.numChunks(); i++) {
            assertTrue(pushStarts.contains(f.chunkOffset(i)), "chunk " + i + " starts inside a push");
            assertTrue(f.chunkLength(i) <= 10 << 10, "chunk " + i + " is " + f.chunkLength(i) + " bytes");
            covered += f.chunkLength(i);
        }
        assertEquals(expected.size(), covered);
        assertTrue(f.numChunks() > 5, f.numChunks() + " chunks");
        assertEquals(0, memory.held());
    }

    @Test
    void aCommittedWriterRefusesLatePushes() throws Exception {
        PartitionFileWriter w = writer(1 << 20, 8 << 20);
        w.append(data(bytes(100, 1)));
        w.commit().get();
        StatusException e = assertThrows(StatusException.class, () -> w.append(data(bytes(10, 2))));
        assertEquals(StatusCode.STAGE_ENDED, e.status());
        assertTrue(w.retired());
    }

    @Test
    void destroyReleasesBufferedDataAndDeletesTheFile() throws Exception {
        PartitionFileWriter w = writer(4 << 10, 8 << 20);
        for (int i = 0; i < 10; i++) w.append(data(bytes(1500, i))); // some written, some buffered
        // Let the queued writes land so the file exists.
        waitFor(() -> memory.held() <= memory.unqueued(), 30_000, "the queued writes land");
        assertTrue(w.bufferedBytes() > 0);
        w.destroy();
        assertEquals(0, memory.held());
        File f = new File(dir.toFile(), "0-0.data");
        waitFor(() -> !f.exists(), 30_000, f + " is deleted (on the disk's cleaner thread)");
        StatusException e = assertThrows(StatusException.class, () -> w.append(data(bytes(10, 2))));
        assertEquals(StatusCode.UNKNOWN_LOCATION, e.status());
    }

    @Test
    void closeFreesTheBufferKeepsTheFileAndFailsALaterCommit() throws Exception {
        PartitionFileWriter w = writer(1 << 20, 8 << 20);
        w.append(data(bytes(3000, 1)));
        assertTrue(memory.held() >= 3000);
        w.close();
        assertEquals(0, memory.held());
        assertTrue(w.retired());
        StatusException e = assertThrows(StatusException.class, () -> w.append(data(bytes(10, 2))));
        assertEquals(StatusCode.HARD_SPLIT, e.status());
        ExecutionException c =
                assertThrows(ExecutionException.class, () -> w.commit().get());
        assertTrue(
                c.getCause().getMessage().contains("dropped 3000"), c.getCause().getMessage());
    }

    @Test
    void closeAfterEverythingWasWrittenStillCommits() throws Exception {
        PartitionFileWriter w = writer(4 << 10, 8 << 20);
        byte[] b = bytes(4 << 10, 3);
        w.append(data(b)); // exactly one flush buffer: queued at once
        w.close();
        CommittedFile f = w.commit().get();
        assertArrayEquals(b, Files.readAllBytes(f.file().toPath()));
    }

    @Test
    void emptyPushesAreNoOps() throws Exception {
        PartitionFileWriter w = writer(1 << 20, 8 << 20);
        w.append(data(new byte[0]));
        CommittedFile f = w.commit().get();
        assertEquals(0, f.length());
        assertEquals(0, f.numChunks());
        assertTrue(Arrays.equals(
                new byte[0], f.file().exists() ? Files.readAllBytes(f.file().toPath()) : new byte[0]));
    }

    @Test
    void aHungDisksQueuedWritesAreGivenUpTheirMemoryReleasedAndTheCommitAnswered() throws Exception {
        PartitionFileWriter w = writer(4 << 10, 1 << 20);
        // As the storage manager does: a failed disk gives up what waits for it.
        disk.onFailure(() -> {
            disk.flusher().abandonAll("the disk hangs");
            w.diskFailed("the disk hangs");
        });
        DiskHangInjection.hang(dir.toFile());
        try {
            for (int i = 0; i < 12; i++)
                w.append(data(batches(2, 5, 2000, i))); // ~48 KB: writes queue behind hung ones
            w.append(data(batches(1, 1, 100, 99))); // and some buffered, not yet queued
            assertTrue(disk.flusher().outstandingWrites() > 2, "writes wait for the hung disk");
            assertTrue(memory.held() > 0);
            java.util.concurrent.CompletableFuture<CommittedFile> commit = w.commit();
            assertFalse(commit.isDone(), "a commit waits for the hung writes");

            disk.markFailed("the disk hangs");
            assertEquals(0, memory.held(), "nothing waiting for the hung disk counts as held any more");
            assertEquals(0, disk.flusher().outstandingWrites());
            ExecutionException e = assertThrows(
                    ExecutionException.class,
                    () -> commit.get(10, java.util.concurrent.TimeUnit.SECONDS),
                    "the commit answers at once");
            assertTrue(
                    e.getCause().getMessage().contains("DISK_FAILED")
                            || e.getCause().getCause() instanceof StatusException,
                    e.getCause().toString());
            StatusException refused = assertThrows(StatusException.class, () -> w.append(data(batches(1, 1, 10, 7))));
            assertEquals(StatusCode.DISK_FAILED, refused.status());
        } finally {
            DiskHangInjection.heal(dir.toFile()); // the writes that were running return and free their buffers
        }
        disk.flusher().close();
        assertEquals(0, memory.held());
    }
}
