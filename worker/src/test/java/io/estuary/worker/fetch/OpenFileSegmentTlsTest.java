package io.estuary.worker.fetch;

import static org.junit.jupiter.api.Assertions.*;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A chunk on a TLS channel, where sendfile cannot be used: its range is read into a pooled buffer. */
class OpenFileSegmentTlsTest {
    @TempDir
    Path dir;

    @Test
    void theRangeIsCopiedIntoAPooledBufferOnceAndTheFileClosed() throws Exception {
        byte[] data = new byte[700_000];
        new Random(11).nextBytes(data);
        File f = dir.resolve("part.data").toFile();
        Files.write(f.toPath(), data);
        OpenFileSegment segment = OpenFileSegment.open(f, 1000, 500_000);
        ByteBuf buf = (ByteBuf) segment.convertToNettyBytes(PooledByteBufAllocator.DEFAULT);
        try {
            assertTrue(buf.isDirect(), "a pooled direct buffer, as the TLS handler wants");
            byte[] got = new byte[buf.readableBytes()];
            buf.readBytes(got);
            assertArrayEquals(Arrays.copyOfRange(data, 1000, 501_000), got);
        } finally {
            assertTrue(buf.release());
        }
        assertThrows(IOException.class, () -> segment.convertToNettyBytes(PooledByteBufAllocator.DEFAULT));
        segment.release(); // nothing left to close, and no error
    }
}
