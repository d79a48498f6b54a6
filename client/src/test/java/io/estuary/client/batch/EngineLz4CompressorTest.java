package io.estuary.client.batch;

import static org.junit.jupiter.api.Assertions.*;

import io.netty.buffer.ByteBuf;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;

class EngineLz4CompressorTest {
    @Test
    void theEnginesNativeCompressorIsFoundWhereItsClassesAre() {
        // The test class path has lz4-java unrelocated with its native library for this platform, as Spark's has.
        assertNotNull(EngineLz4Compressor.NATIVE, "lz4-java's native compressor did not load");
    }

    @Test
    void withoutLz4JavaOnTheEnginesClassPathTheBundledOneCompresses() throws Exception {
        try (URLClassLoader empty = new URLClassLoader(new URL[0], null)) {
            assertNull(EngineLz4Compressor.load(empty));
        }
    }

    @Test
    void whatTheNativeCompressorWritesTheBundledDecompressorReadsBack() {
        EngineLz4Compressor engine = EngineLz4Compressor.NATIVE;
        assertNotNull(engine);
        Random r = new Random(11);
        for (int size : new int[] {0, 1, 100, 64 * 1024, 1 << 20}) {
            byte[] raw = new byte[size];
            for (int i = 0; i < size; i++) raw[i] = (byte) ('a' + r.nextInt(size % 2 == 0 ? 4 : 200));
            int room = Lz4Blocks.LZ4.fastCompressor().maxCompressedLength(size);
            // Heap source, direct destination: as Lz4Blocks calls it (a record buffer into a pooled direct batch).
            ByteBuffer out = ByteBuffer.allocateDirect(room + 5);
            int n = engine.compress(ByteBuffer.wrap(raw), 0, size, out, 5, room);
            byte[] compressed = new byte[n];
            for (int i = 0; i < n; i++) compressed[i] = out.get(5 + i);
            byte[] back = new byte[size];
            assertEquals(size, Lz4Blocks.LZ4.safeDecompressor().decompress(compressed, 0, n, back, 0, size));
            assertArrayEquals(raw, back, "size " + size);
        }
    }

    @Test
    void aBatchCodecCompressesWithItAndDecodesItsOwnBatches() {
        BatchCodec codec = new BatchCodec("lz4");
        byte[] raw = new byte[200_000];
        for (int i = 0; i < raw.length; i++) raw[i] = (byte) (i % 31);
        ByteBuf b = codec.encode(0, 0, 0, 1, raw, 0, raw.length);
        try {
            assertEquals(BatchHeader.CODEC_LZ4, BatchHeader.codec(b, 0));
            assertTrue(b.readableBytes() < raw.length / 10, "compressed to " + b.readableBytes());
            ByteBuf decoded = codec.decode(b, 0, "test");
            byte[] back = new byte[decoded.readableBytes()];
            decoded.getBytes(decoded.readerIndex(), back);
            assertArrayEquals(raw, back);
        } finally {
            b.release();
        }
    }
}
