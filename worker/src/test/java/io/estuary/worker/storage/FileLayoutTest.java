package io.estuary.worker.storage;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.util.BatchLayout;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.File;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/** Where chunks start, and what the committed file says it holds, from the pushes alone (no disk). */
class FileLayoutTest {
    /** A push of {@code batches} batches of one record and {@code dataLength} data bytes each. */
    private static ByteBuf push(int batches, int dataLength) {
        ByteBuffer b = ByteBuffer.allocate(batches * (BatchLayout.HEADER_SIZE + dataLength));
        for (int i = 0; i < batches; i++) {
            int at = i * (BatchLayout.HEADER_SIZE + dataLength);
            b.putInt(at + BatchLayout.DATA_LENGTH, dataLength);
            b.putInt(at + BatchLayout.RECORDS, 1);
        }
        return Unpooled.wrappedBuffer(b.array());
    }

    @Test
    void chunksStartBetweenPushesAndGrowPastTheChunkSizeOnlyForOneLargePush() {
        long p = 2L * (BatchLayout.HEADER_SIZE + 100); // one push of two batches
        FileLayout layout = new FileLayout(2 * p, 0); // two such pushes fill a chunk
        for (int i = 0; i < 4; i++) layout.append(push(2, 100));
        layout.append(push(10, 100)); // five pushes' worth alone: starts its own chunk and is not cut
        layout.append(push(1, 100)); // would overfill the large chunk: starts the next
        assertEquals(9 * p + p / 2, layout.length());

        CommittedFile f = layout.committed(new File("unused"), null);
        assertEquals(layout.length(), f.length());
        long[] starts = {0, 2 * p, 4 * p, 9 * p};
        assertEquals(starts.length, f.numChunks());
        for (int i = 0; i < starts.length; i++) assertEquals(starts[i], f.chunkOffset(i), "chunk " + i);
        assertNull(f.mapIndex(), "map indexing is off");
        assertEquals(19, f.contents().batches());
        assertEquals(19, f.contents().records());
    }

    /** With 8 MiB chunks, the first are 1, 2 and 4 MiB, so that a reducer starts on 1 MiB rather than on 8. */
    @Test
    void aLargeFilesFirstChunksRampUpToTheChunkSize() {
        int dataLength = (64 << 10) - BatchLayout.HEADER_SIZE; // pushes of one 64 KiB batch
        FileLayout layout = new FileLayout(8 << 20, 0);
        for (int i = 0; i < 16 * 40; i++) layout.append(push(1, dataLength)); // 40 MiB
        CommittedFile f = layout.committed(new File("unused"), null);
        long mib = 1 << 20;
        long[] starts = {0, mib, 3 * mib, 7 * mib, 15 * mib, 23 * mib, 31 * mib, 39 * mib};
        assertEquals(starts.length, f.numChunks());
        for (int i = 0; i < starts.length; i++) assertEquals(starts[i], f.chunkOffset(i), "chunk " + i);
        // Chunk sizes of at most 8 times the floor do not ramp: tests and small clusters keep their sizes.
        FileLayout small = new FileLayout(1 << 20, 0);
        assertEquals(1 << 20, small.chunkLimit(0));
        assertEquals(8 << 20, new FileLayout(8 << 20, 0).chunkLimit(3));
    }

    @Test
    void theChecksumCoversTheFlushBuffersInTheOrderTheyAreQueued() {
        FileLayout layout = new FileLayout(1 << 20, 0);
        ByteBuf a = push(1, 10);
        ByteBuf b = push(3, 5);
        layout.append(a);
        layout.append(b);
        layout.queued(a);
        layout.queued(b);
        CRC32C crc = new CRC32C();
        crc.update(a.nioBuffer());
        crc.update(b.nioBuffer());
        CommittedFile f = layout.committed(new File("unused"), null);
        assertEquals(crc.getValue(), f.contents().crc32c());
        assertEquals(4, f.contents().batches());
    }

    @Test
    void aMapIndexIsBuiltWhenAGranularityIsGiven() {
        FileLayout layout = new FileLayout(1000, 256);
        layout.append(push(3, 100));
        assertNotNull(layout.committed(new File("unused"), null).mapIndex());
    }
}
