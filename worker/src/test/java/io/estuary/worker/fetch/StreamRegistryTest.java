package io.estuary.worker.fetch;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.testing.ManualClock;
import io.estuary.worker.storage.CommittedFile;
import java.io.File;
import java.nio.file.Files;
import org.junit.jupiter.api.Test;

class StreamRegistryTest {
    @Test
    void streamsEndAfterTheLastChunkOrWhenIdleAndUnknownOnesAreRefused() throws Exception {
        File f = Files.createTempFile("part", ".data").toFile();
        Files.write(f.toPath(), new byte[300]);
        CommittedFile file = new CommittedFile(f, new long[] {0, 100, 200}, 300, null);
        ManualClock clock = new ManualClock();
        StreamRegistry r = new StreamRegistry(null, 1000, clock);
        long a = r.open(file, null);
        long b = r.open(file, null);
        assertEquals(100, r.getChunk(a, 0).size());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> r.getChunk(a, 3));
        assertTrue(e.getMessage().contains("has 3 chunks"), e.getMessage());
        assertEquals(100, r.getChunk(a, 2).size());
        StatusException unknown = assertThrows(StatusException.class, () -> r.getChunk(a, 1));
        assertTrue(unknown.getMessage().contains("unknown stream"), unknown.getMessage());
        assertEquals(StatusCode.UNKNOWN_STREAM, unknown.status(), "the reader opens it again, nothing is lost");
        // Stream b's reader went away after one chunk: it is dropped once idle.
        r.getChunk(b, 0);
        long idleMs = 60_000;
        clock.advanceMillis(idleMs);
        assertEquals(0, r.dropIdle(idleMs));
        clock.advanceMillis(1);
        assertEquals(1, r.dropIdle(idleMs));
        assertEquals(0, r.openStreams());
        // A file deleted under an open stream fails that chunk alone, with the reason.
        long c = r.open(file, null);
        assertTrue(f.delete());
        StatusException gone = assertThrows(StatusException.class, () -> r.getChunk(c, 0));
        assertTrue(gone.getMessage().contains("cannot be read"), gone.getMessage());
        assertEquals(StatusCode.DISK_FAILED, gone.status());
    }

    @Test
    void aCachedChunkIsServedFromMemoryAndItsReferenceGoesOnceWhicheverSideReleasesIt() throws Exception {
        File f = Files.createTempFile("part", ".data").toFile();
        byte[] data = new byte[300];
        new java.util.Random(3).nextBytes(data);
        Files.write(f.toPath(), data);
        CommittedFile file = new CommittedFile(f, new long[] {0, 100, 200}, 300, null);
        io.estuary.worker.storage.MemoryTracker memory = new io.estuary.worker.storage.MemoryTracker(1 << 20);
        io.estuary.worker.storage.PartitionCache cache =
                new io.estuary.worker.storage.PartitionCache(memory, true, 1 << 20, 1 << 20);
        assertTrue(cache.startFill("s", file) && cache.fill(file));
        assertTrue(f.delete(), "served from memory from now on");
        StreamRegistry r = new StreamRegistry(cache);
        long id = r.open(file, null);
        io.netty.buffer.ByteBuf root = null;
        for (int c = 0; c < 3; c++) {
            io.estuary.network.buffer.ManagedBuffer chunk = r.getChunk(id, c);
            // What the transport does: Netty gets its own reference, the body is released once encoded, the send ends.
            io.netty.buffer.ByteBuf sent = (io.netty.buffer.ByteBuf) chunk.convertToNetty();
            byte[] got = new byte[100];
            sent.getBytes(sent.readerIndex(), got);
            assertArrayEquals(java.util.Arrays.copyOfRange(data, c * 100, c * 100 + 100), got, "chunk " + c);
            root = sent;
            while (root.unwrap() != null) root = root.unwrap(); // through leak-detection wrappers and derived buffers
            chunk.release();
            r.chunkSent(id, c, 1000, true); // releases a body the transport never took; here a no-op
            assertTrue(sent.release());
        }
        assertEquals(3, cache.counters().hits());
        assertEquals(1, root.refCnt(), "only the cache holds the entry");
        cache.close();
        assertEquals(0, root.refCnt());
        assertEquals(0, memory.held());
    }
}
