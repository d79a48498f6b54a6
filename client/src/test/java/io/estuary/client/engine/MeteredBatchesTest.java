package io.estuary.client.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.client.batch.BatchCodec;
import io.estuary.client.batch.BatchHeader;
import io.estuary.client.read.ShuffleDataLostException;
import io.estuary.network.client.RemoteException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Test;

class MeteredBatchesTest {
    /**
     * Chunks of BatchCodec-encoded batches, decoded one batch per call as the reader does; loading a chunk counts its
     * bytes, one chunk, and {@code waitPerChunkNanos} of fetch wait.
     */
    private static final class ChunkSource implements MeteredBatches.Source {
        final BatchCodec codec = new BatchCodec("lz4");
        final Deque<ByteBuf> chunks = new ArrayDeque<>();
        final long waitPerChunkNanos;
        ByteBuf chunk;
        long bytes;
        long chunkCount;
        long waitNanos;
        int closes;
        RuntimeException failOnLoad;

        ChunkSource(long waitPerChunkNanos) {
            this.waitPerChunkNanos = waitPerChunkNanos;
        }

        void addChunk(String... batches) {
            ByteBuf c = Unpooled.buffer();
            for (int i = 0; i < batches.length; i++) {
                byte[] raw = batches[i].getBytes(StandardCharsets.UTF_8);
                ByteBuf b = codec.encode(0, 0, chunks.size() * 10 + i, 1, raw, 0, raw.length);
                c.writeBytes(b);
                b.release();
            }
            chunks.add(c);
        }

        @Override
        public ByteBuf next() {
            while (chunk == null || !chunk.isReadable()) {
                if (chunk != null) chunk.release();
                chunk = null;
                if (failOnLoad != null) throw failOnLoad;
                if (chunks.isEmpty()) return null;
                chunk = chunks.poll();
                bytes += chunk.readableBytes();
                chunkCount++;
                waitNanos += waitPerChunkNanos;
            }
            int at = chunk.readerIndex();
            ByteBuf batch = codec.decode(chunk, at, "test");
            chunk.skipBytes(BatchHeader.SIZE + BatchHeader.dataLength(chunk, at));
            return batch;
        }

        @Override
        public long bytesFetched() {
            return bytes;
        }

        @Override
        public long chunksFetched() {
            return chunkCount;
        }

        @Override
        public long fetchWaitNanos() {
            return waitNanos;
        }

        @Override
        public void close() {
            closes++;
            if (chunk != null) chunk.release();
            chunk = null;
            while (!chunks.isEmpty()) chunks.poll().release();
        }
    }

    private static String text(ByteBuf b) {
        byte[] out = new byte[b.readableBytes()];
        b.getBytes(b.readerIndex(), out);
        return new String(out, StandardCharsets.UTF_8);
    }

    @Test
    void reportsEveryByteChunkAndWaitOnceAndClosesAtTheEnd() throws RemoteException {
        ChunkSource source = new ChunkSource(600_000); // 0.6 ms a chunk: single waits round down to 0 ms
        source.addChunk("a1", "a2", "a3");
        source.addChunk("b1");
        source.addChunk("c1", "c2");
        long encodedBytes = 0;
        for (ByteBuf c : source.chunks) encodedBytes += c.readableBytes();
        ReadTotals totals = new ReadTotals();
        List<Long> bytesAfterEach = new ArrayList<>();
        MeteredBatches batches = new MeteredBatches(source, new ReadMetricsSink() {
            @Override
            public void bytesFetched(long bytes) {
                assertTrue(bytes > 0, "only increments are reported");
                totals.bytesFetched(bytes);
            }

            @Override
            public void chunksFetched(long chunks) {
                assertTrue(chunks > 0);
                totals.chunksFetched(chunks);
            }

            @Override
            public void fetchWaitMillis(long millis) {
                assertTrue(millis > 0);
                totals.fetchWaitMillis(millis);
            }
        });
        List<String> read = new ArrayList<>();
        ByteBuf b;
        while ((b = batches.next()) != null) {
            read.add(text(b));
            bytesAfterEach.add(totals.bytes());
            assertEquals(source.bytes, totals.bytes(), "bytes are reported as soon as they were fetched");
        }
        assertArrayEquals(new String[] {"a1", "a2", "a3", "b1", "c1", "c2"}, read.toArray());
        assertEquals(encodedBytes, totals.bytes());
        assertEquals(3, totals.chunks());
        assertEquals(1, totals.waitMillis(), "1.8 ms of waits in 0.6 ms steps: 1 whole ms, not 0");
        assertTrue(batches.done());
        assertEquals(1, source.closes, "closed when it ran out");
        assertNull(batches.next(), "stays at the end");
        assertEquals(1, source.closes);
        batches.close(); // the engine's task-end close is harmless after the end
        assertEquals(encodedBytes, bytesAfterEach.get(bytesAfterEach.size() - 1).longValue());
    }

    @Test
    void lossIsThrownAfterWhatWasFetchedIsReported() throws RemoteException {
        ChunkSource source = new ChunkSource(2_000_000);
        source.addChunk("x");
        ReadTotals totals = new ReadTotals();
        MeteredBatches batches = new MeteredBatches(source, totals);
        assertEquals("x", text(batches.next()));
        ShuffleDataLostException lost = new ShuffleDataLostException(1, 5, 0, 0, "epoch 0 lost", null);
        source.failOnLoad = lost;
        assertSame(lost, assertThrows(ShuffleDataLostException.class, batches::next));
        assertEquals(1, totals.chunks());
        assertEquals(2, totals.waitMillis());
        assertTrue(!batches.done());
        batches.close();
        assertEquals(1, source.closes);
    }
}
