package io.estuary.worker.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.estuary.common.util.BatchLayout;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

class MapIndexTest {
    /** A push of one batch of {@code dataLength} bytes from {@code map}. */
    private static ByteBuf push(int map, int dataLength) {
        ByteBuf b = Unpooled.buffer(BatchLayout.HEADER_SIZE + dataLength);
        b.writeZero(BatchLayout.HEADER_SIZE + dataLength);
        b.setInt(BatchLayout.MAP_ID, map);
        b.setInt(BatchLayout.DATA_LENGTH, dataLength);
        return b;
    }

    @Test
    void selectsTheRegionsOfTheMapsAskedForAndNeverCrossesAChunkStart() {
        MapIndex.Builder b = new MapIndex.Builder(200);
        long off = 0;
        int size = BatchLayout.HEADER_SIZE + 68; // 100 bytes a push: two pushes a region
        long[] chunks = {0, 400};
        for (int i = 0; i < 8; i++) { // maps 0,0,1,1,2,2,3,3 at 0, 100, ... 700
            b.add(off, push(i / 2, 68), off == 0 || off == 400);
            off += size;
        }
        MapIndex index = b.build(off);
        assertEquals(4, index.regions());
        FileSegments one = index.select(1, 2, chunks);
        assertEquals(1, one.count());
        assertEquals(200, one.offset(0));
        assertEquals(200, one.length(0));
        FileSegments middle = index.select(1, 3, chunks); // regions 200-400 and 400-600: adjacent, but a chunk starts
        assertEquals(2, middle.count());
        assertEquals(400, middle.offset(1));
        assertEquals(400, middle.totalBytes());
        assertEquals(0, index.select(7, 9, chunks).count());
        assertEquals(800, index.select(0, 4, chunks).totalBytes());
    }

    @Test
    void aPushThatIsNotBatchesLeavesTheFileUnindexed() {
        MapIndex.Builder b = new MapIndex.Builder(200);
        b.add(0, push(0, 10), true);
        b.add(42, Unpooled.wrappedBuffer(new byte[] {1, 2, 3}), false);
        assertNull(b.build(45));
    }

    @Test
    void aFileWithoutAnIndexServesEveryChunkToAMapRange() {
        CommittedFile f = new CommittedFile(new java.io.File("x"), new long[] {0, 100}, 150, null);
        FileSegments s = f.segmentsFor(3, 4);
        assertEquals(2, s.count());
        assertEquals(50, s.length(1));
    }
}
