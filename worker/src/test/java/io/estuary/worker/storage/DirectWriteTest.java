package io.estuary.worker.storage;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.estuary.common.util.BatchLayout;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Partition files written with {@code O_DIRECT} ({@code estuary.worker.flush.directIo}): pushes of any size, flushes
 * full and early, on two flusher threads, and the file holds exactly the bytes appended, in order, with their
 * checksum; only the last partial block (or, after an early flush smaller than a block, the rest of the file) goes
 * through the page cache, and every byte of memory is given back. Skipped where the temporary directory's file
 * system takes no direct writes (tmpfs).
 */
class DirectWriteTest {
    private Path dir;
    private Disk disk;
    private MemoryTracker memory;
    private int align;
    private final List<ByteBuf> appended = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        dir = Files.createTempDirectory("estuary-direct");
        align = DirectWrites.alignment(dir.toFile());
        assumeTrue(align > 0, "the temporary directory's file system takes no direct writes");
        disk = new Disk(dir.toFile(), 2, 1);
        memory = new MemoryTracker(64 << 20);
    }

    @AfterEach
    void tearDown() {
        if (disk != null) disk.close();
        for (ByteBuf b : appended) assertEquals(0, b.refCnt(), "an appended buffer was not released");
        if (memory != null) assertEquals(0, memory.held(), "memory still counted as held");
        StorageManager.deleteTree(dir);
    }

    private PartitionFileWriter writer(String name, int flushThreshold) {
        PartitionFileWriter w = new PartitionFileWriter(
                name, new File(dir.toFile(), name + ".data"), disk, memory, flushThreshold, 1 << 20);
        w.directIo(align);
        return w;
    }

    /** A push of whole batches, {@code size} bytes or a little more, with random contents. */
    private ByteBuf push(Random r, int size, ByteArrayOutputStream expected) {
        int batches = 1 + r.nextInt(3);
        int dataLength = Math.max(1, size / batches - BatchLayout.HEADER_SIZE);
        ByteBuffer b = ByteBuffer.allocate(batches * (BatchLayout.HEADER_SIZE + dataLength));
        for (int i = 0; i < batches; i++) {
            int at = b.position();
            byte[] data = new byte[BatchLayout.HEADER_SIZE + dataLength];
            r.nextBytes(data);
            b.put(data);
            b.putInt(at + BatchLayout.MAP_ID, 1);
            b.putInt(at + BatchLayout.DATA_LENGTH, dataLength);
            b.putInt(at + BatchLayout.RECORDS, 1);
        }
        expected.write(b.array(), 0, b.capacity());
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(b.capacity()).writeBytes(b.array());
        appended.add(buf);
        return buf;
    }

    private static long crc(byte[] b) {
        CRC32C c = new CRC32C();
        c.update(b);
        return c.getValue();
    }

    @Test
    void fullAndEarlyFlushesWriteTheAlignedHeadsDirectlyAndTheFileIsExact() throws Exception {
        PartitionFileWriter w = writer("mixed", 64 << 10);
        Random r = new Random(7);
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        for (int i = 0; i < 300; i++) {
            w.append(push(r, 100 + r.nextInt(9000), expected));
            if (i % 37 == 36 && w.bufferedBytes() >= align) {
                long freed = w.flushBuffered();
                assertTrue(freed > 0, "an early flush of at least a block frees its buffer, keeping the tail");
                assertTrue(w.bufferedBytes() < align, "only the tail under a block stays buffered");
            }
        }
        CommittedFile f = w.commit().get();
        byte[] want = expected.toByteArray();
        byte[] got = Files.readAllBytes(f.file().toPath());
        assertEquals(want.length, f.length());
        assertEquals(want.length, got.length, "the file ends where the data ends, not on a block");
        assertArrayEquals(want, got);
        assertEquals(crc(want), f.contents().crc32c(), "the checksum sees each byte once, a carried tail included");
        assertTrue(
                disk.writtenBytes(false) < align,
                "only the last partial block goes through the page cache: " + disk.writtenBytes(false));
        assertEquals(want.length, disk.writtenBytes(true) + disk.writtenBytes(false));
        assertEquals(0, disk.writtenBytes(true) % align);
        w.destroy();
    }

    @Test
    void anEarlyFlushUnderABlockWritesTheRestOfTheFileThroughThePageCache() throws Exception {
        PartitionFileWriter w = writer("small-early", 64 << 10);
        Random r = new Random(11);
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        w.append(push(r, 200_000, expected)); // over the threshold: flushed, its head directly
        long direct = expected.size() - expected.size() % align;
        if (w.bufferedBytes() == 0) w.append(push(r, 300, expected));
        assertTrue(w.bufferedBytes() < align, "a tail under a block is left");
        assertTrue(w.flushBuffered() > 0, "an early flush under a block is written through the page cache");
        for (int i = 0; i < 40; i++) w.append(push(r, 5000 + r.nextInt(5000), expected));
        CommittedFile f = w.commit().get();
        byte[] want = expected.toByteArray();
        assertArrayEquals(want, Files.readAllBytes(f.file().toPath()));
        assertEquals(crc(want), f.contents().crc32c());
        assertEquals(direct, disk.writtenBytes(true), "the first flush went directly, nothing after the early one");
        assertEquals(want.length - direct, disk.writtenBytes(false));
        w.destroy();
    }

    @Test
    void partitionsOfUnderABlockAreWrittenWholeThroughThePageCache() throws Exception {
        Random r = new Random(3);
        List<ByteArrayOutputStream> want = new ArrayList<>();
        List<PartitionFileWriter> writers = new ArrayList<>();
        for (int p = 0; p < 20; p++) {
            PartitionFileWriter w = writer("tiny-" + p, 64 << 10);
            ByteArrayOutputStream e = new ByteArrayOutputStream();
            w.append(push(r, 50 + r.nextInt(3000), e));
            writers.add(w);
            want.add(e);
        }
        for (int p = 0; p < writers.size(); p++) {
            CommittedFile f = writers.get(p).commit().get();
            assertArrayEquals(
                    want.get(p).toByteArray(), Files.readAllBytes(f.file().toPath()));
            writers.get(p).destroy();
        }
        assertEquals(0, disk.writtenBytes(true));
    }
}
