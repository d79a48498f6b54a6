package io.estuary.worker.storage;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Copies held in the cache at their commit instead of written, on a real disk, cache and memory tracker. Replicas
 * ({@code estuary.worker.replica.holdInMemory}): no file until the cache needs the room or a stop asks for it, the
 * same bytes served from memory and then written, memory counted throughout and released once, and a shuffle removed
 * while held leaves nothing behind. Replicated primaries ({@code estuary.worker.commit.fromMemory}): committed
 * without waiting for the disk, written at once. Unreplicated primaries and copies that filled a flush buffer are
 * written as before.
 */
class HeldReplicaTest {
    private static final String SHUFFLE = "app-held/0";
    private static final int FLUSH = 64 << 10;

    private Path dir;
    private Disk disk;
    private MemoryTracker memory;
    private PartitionCache cache;
    private final List<ByteBuf> appended = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        dir = Files.createTempDirectory("estuary-held");
        disk = new Disk(dir.toFile(), 1, 1); // one flusher thread: drain() sees everything queued before it
        memory = new MemoryTracker(64 << 20);
    }

    @AfterEach
    void tearDown() {
        if (cache != null) cache.close();
        disk.close();
        for (ByteBuf b : appended) assertEquals(0, b.refCnt(), "an appended buffer was not released");
        assertEquals(0, memory.held(), "memory still counted as held");
        StorageManager.deleteTree(dir);
    }

    private PartitionCache cache(long maxBytes) {
        cache = new PartitionCache(memory, true, maxBytes, 1 << 20);
        return cache;
    }

    private File file(int partition) {
        return new File(dir.toFile(), partition + "-0.data");
    }

    private PartitionFileWriter replica(int partition, PartitionCache holdIn) {
        return writer(partition, holdIn, false);
    }

    /** A replicated primary's writer (an unreplicated one has no cache to hold in). */
    private PartitionFileWriter primary(int partition, PartitionCache holdIn) {
        return writer(partition, holdIn, true);
    }

    private PartitionFileWriter writer(int partition, PartitionCache holdIn, boolean writeAtOnce) {
        PartitionFileWriter w =
                new PartitionFileWriter("partition " + partition, file(partition), disk, memory, FLUSH, 1 << 20);
        w.holdInMemory(holdIn, SHUFFLE, writeAtOnce);
        return w;
    }

    private byte[] append(PartitionFileWriter w, int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) b[i] = (byte) (seed * 31 + i * 7);
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(n).writeBytes(b);
        appended.add(buf);
        w.append(buf);
        return b;
    }

    /** Waits until everything queued on the disk's flusher before this call has run. */
    private void drain() throws InterruptedException {
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        disk.flusher().prepare(done::countDown);
        assertTrue(done.await(30, java.util.concurrent.TimeUnit.SECONDS));
    }

    private static byte[] bytesOf(ByteBuf slice) {
        try {
            byte[] b = new byte[slice.readableBytes()];
            slice.readBytes(b);
            return b;
        } finally {
            slice.release();
        }
    }

    private static long crc(byte[] b) {
        CRC32C c = new CRC32C();
        c.update(b);
        return c.getValue();
    }

    /** The copy of {@code f} was written once, is held no more, stays cached, and a graceful stop writes nothing. */
    private static void assertWrittenOnceAndStillCached(PartitionCache c, CommittedFile f) throws Exception {
        assertEquals(0, c.counters().heldBytes());
        assertEquals(1, c.counters().writeBacks());
        assertTrue(c.contains(f), "still cached, now as an ordinary entry");
        c.writeBackHeld().get();
        assertEquals(1, c.counters().writeBacks(), "written once");
    }

    @Test
    void aSmallReplicaCopyIsServedFromMemoryAndWrittenOnlyWhenAsked() throws Exception {
        PartitionCache c = cache(8 << 20);
        PartitionFileWriter w = replica(1, c);
        byte[] data = append(w, 5000, 1);
        CommittedFile f = w.commit().get();
        drain(); // nothing queued before this (no creation ahead, no write) has made a file
        assertFalse(file(1).exists(), "a held copy has no file");
        assertSame(f, w.commit().get(), "the committed file is the cache's key");
        assertTrue(c.contains(f));
        assertArrayEquals(data, bytesOf(c.slice(f, 0, f.length())));
        assertEquals(crc(data), f.contents().crc32c(), "the checksum is of the bytes held");
        assertTrue(c.counters().heldBytes() >= data.length);
        assertTrue(memory.held() >= data.length, "held bytes stay counted");

        c.writeBackHeld().get();
        assertArrayEquals(data, Files.readAllBytes(file(1).toPath()), "written whole at a graceful stop");
        assertWrittenOnceAndStillCached(c, f);
    }

    @Test
    void anUnreplicatedPrimaryAndACopyThatFilledAFlushBufferAreWrittenAsBefore() throws Exception {
        PartitionCache c = cache(8 << 20);
        PartitionFileWriter primary = primary(1, null);
        byte[] p = append(primary, 3000, 2);
        CommittedFile pf = primary.commit().get();
        assertArrayEquals(p, Files.readAllBytes(file(1).toPath()));
        assertFalse(c.contains(pf));

        PartitionFileWriter large = replica(2, c);
        byte[] first = append(large, FLUSH, 3);
        byte[] rest = append(large, 100, 4);
        CommittedFile lf = large.commit().get();
        byte[] all = Arrays.copyOf(first, first.length + rest.length);
        System.arraycopy(rest, 0, all, first.length, rest.length);
        assertArrayEquals(all, Files.readAllBytes(file(2).toPath()));
        assertFalse(c.contains(lf));
        assertEquals(0, c.counters().heldBytes());
    }

    @Test
    void aFullCacheWritesItsOldestHeldCopyToMakeRoomForTheNext() throws Exception {
        // Room for two first buffers of small partitions, not three.
        int room = 2 * FlushBuffer.INITIAL_BUFFER + FlushBuffer.INITIAL_BUFFER / 2;
        PartitionCache c = cache(room);
        PartitionFileWriter w1 = replica(1, c);
        byte[] d1 = append(w1, 1000, 5);
        CommittedFile f1 = w1.commit().get();
        PartitionFileWriter w2 = replica(2, c);
        append(w2, 1000, 6);
        CommittedFile f2 = w2.commit().get();
        assertTrue(c.contains(f1) && c.contains(f2));
        drain();
        assertFalse(file(1).exists() || file(2).exists());

        PartitionFileWriter w3 = replica(3, c);
        byte[] d3 = append(w3, 1000, 7);
        CommittedFile f3 = w3.commit().get();
        assertTrue(c.contains(f3), "held in the room the oldest copy leaves");
        waitFor(() -> file(1).exists() && file(1).length() == d1.length, "the oldest held copy written for room");
        assertArrayEquals(d1, Files.readAllBytes(file(1).toPath()));
        waitFor(() -> c.bytes() <= room, "back within its capacity once that write ended");
        assertFalse(c.contains(f1), "the written copy is evicted first");
        assertEquals(2 * FlushBuffer.INITIAL_BUFFER, c.counters().heldBytes(), "two copies still held");
        assertArrayEquals(d3, bytesOf(c.slice(f3, 0, f3.length())));
        drain();
        assertFalse(file(2).exists() || file(3).exists());
    }

    @Test
    void aReplicatedPrimaryCommitsWithoutWaitingForItsDiskAndIsWrittenAtOnce() throws Exception {
        PartitionCache c = cache(8 << 20);
        PartitionFileWriter w = primary(1, c);
        byte[] data = append(w, 7000, 10);
        DiskHangInjection.hang(dir.toFile());
        CommittedFile f;
        try {
            f = w.commit().get(30, java.util.concurrent.TimeUnit.SECONDS);
            assertTrue(c.contains(f), "committed from memory while its disk hangs");
            assertArrayEquals(data, bytesOf(c.slice(f, 0, f.length())));
            assertEquals(crc(data), f.contents().crc32c());
            assertFalse(file(1).exists() && file(1).length() == data.length, "not on disk while the disk hangs");
        } finally {
            DiskHangInjection.healAll();
        }
        waitFor(() -> file(1).exists() && file(1).length() == data.length, "written right after the commit");
        assertArrayEquals(data, Files.readAllBytes(file(1).toPath()));
        waitFor(() -> c.counters().heldBytes() == 0, "no longer held once written");
        assertWrittenOnceAndStillCached(c, f);
    }

    @Test
    void aPrimaryWhoseReplicaMissedDataCommitsFromDisk() throws Exception {
        PartitionCache c = cache(8 << 20);
        PartitionFileWriter w = primary(1, c);
        byte[] data = append(w, 4000, 11);
        w.replicaMissedData(); // a forward to its replica failed: the replica may not have these bytes
        CommittedFile f = w.commit().get();
        assertArrayEquals(data, Files.readAllBytes(file(1).toPath()), "on disk when its commit completes");
        assertFalse(c.contains(f));
        assertEquals(0, c.counters().heldBytes());
    }

    @Test
    void aShuffleRemovedWhileItsCopyIsHeldLeavesNoFileAndNoMemory() throws Exception {
        PartitionCache c = cache(8 << 20);
        PartitionFileWriter w = replica(1, c);
        append(w, 2000, 8);
        CommittedFile f = w.commit().get();
        assertTrue(c.contains(f));
        c.removeShuffle(SHUFFLE);
        w.destroy();
        assertFalse(c.contains(f));
        assertEquals(0, c.counters().heldBytes());
        c.writeBackHeld().get();
        drain();
        assertFalse(file(1).exists(), "nothing written for a removed shuffle");
    }

    /**
     * The shuffle goes while its held copy's write-back waits on a hung disk: the entry and its memory go at once,
     * and the write, once the disk answers, leaves no file.
     */
    @Test
    void aShuffleRemovedWhileItsCopyIsBeingWrittenLeavesNoFile() throws Exception {
        PartitionCache c = cache(8 << 20);
        PartitionFileWriter w = replica(1, c);
        append(w, 2000, 9);
        CommittedFile f = w.commit().get();
        DiskHangInjection.hang(dir.toFile());
        try {
            java.util.concurrent.CompletableFuture<Void> written = c.writeBackHeld();
            w.destroy();
            c.removeShuffle(SHUFFLE);
            assertFalse(c.contains(f));
            assertEquals(0, c.counters().heldBytes());
            assertFalse(written.isDone(), "the write waits on the hung disk");
            DiskHangInjection.heal(dir.toFile());
            written.get(30, java.util.concurrent.TimeUnit.SECONDS);
        } finally {
            DiskHangInjection.healAll();
        }
        // The write may find the partition deleted, or write first and see the file deleted after it by the cleaner.
        waitFor(() -> !file(1).exists(), "no file for a deleted partition");
        assertEquals(0, c.counters().writeBacks(), "a removed copy's write counts for nothing");
    }

    @Test
    void memoryPressureWritesHeldCopiesAndThenFreesThem() throws Exception {
        PartitionCache c = cache(8 << 20);
        List<CommittedFile> held = new ArrayList<>();
        for (int p = 0; p < 4; p++) {
            PartitionFileWriter w = replica(p, c);
            append(w, 3000, p);
            held.add(w.commit().get());
        }
        assertEquals(4 * 3000, c.counters().heldBytes(), "each first buffer as large as its push");
        // Another part of the worker takes the memory up to its pause mark: the cache must give everything back.
        long taken = memory.limit() - memory.held();
        memory.add(taken);
        try {
            c.shrink();
            waitFor(() -> c.entries() == 0, "every held copy written, then evicted");
            for (int p = 0; p < 4; p++) assertEquals(3000, file(p).length(), "partition " + p + " on disk");
            assertEquals(4, c.counters().writeBacks());
        } finally {
            memory.release(taken);
        }
    }
}
