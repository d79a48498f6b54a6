package io.estuary.client.batch;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.status.StatusCode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BatchCodecTest {
    private static byte[] roundTrip(BatchCodec codec, byte[] raw, int[] codecSeen) {
        ByteBuf b = codec.encode(3, 1, 7, 11, raw, 0, raw.length);
        try {
            assertEquals(3, BatchHeader.mapId(b, 0));
            assertEquals(1, BatchHeader.attemptId(b, 0));
            assertEquals(7, BatchHeader.batchId(b, 0));
            assertEquals(11, BatchHeader.records(b, 0));
            codecSeen[0] = BatchHeader.codec(b, 0);
            ByteBuf out = codec.decode(b, 0, "test");
            byte[] bytes = new byte[out.readableBytes()];
            out.getBytes(out.readerIndex(), bytes);
            return bytes;
        } finally {
            b.release();
        }
    }

    @Test
    void compressibleDataIsCompressedAndComesBack() {
        BatchCodec codec = new BatchCodec("lz4");
        byte[] raw = new byte[64 * 1024];
        for (int i = 0; i < raw.length; i++) raw[i] = (byte) (i % 13);
        int[] used = new int[1];
        for (int i = 0; i < 50; i++) {
            assertArrayEquals(raw, roundTrip(codec, raw, used));
            assertEquals(BatchHeader.CODEC_LZ4, used[0]);
        }
    }

    @Test
    void zstdCompressesMoreThanLz4AndAnyCodecReadsEither() {
        byte[] raw = new byte[256 * 1024];
        Random r = new Random(7);
        for (int i = 0; i < raw.length; i++) raw[i] = (byte) ('a' + r.nextInt(6)); // text-like: few symbols
        BatchCodec zstd = new BatchCodec("zstd", 3);
        BatchCodec lz4 = new BatchCodec("lz4");
        ByteBuf z = zstd.encode(1, 0, 0, 5, raw, 0, raw.length);
        ByteBuf l = lz4.encode(1, 0, 1, 5, raw, 0, raw.length);
        try {
            assertEquals(BatchHeader.CODEC_ZSTD, BatchHeader.codec(z, 0));
            assertEquals(BatchHeader.CODEC_LZ4, BatchHeader.codec(l, 0));
            assertTrue(z.readableBytes() < l.readableBytes(), z.readableBytes() + " vs " + l.readableBytes());
            // A reader decodes what each batch's header says, whatever codec it writes with itself.
            for (BatchCodec reader : new BatchCodec[] {new BatchCodec("none"), lz4, zstd}) {
                assertArrayEquals(raw, bytes(reader.decode(z, 0, "zstd batch")));
                assertArrayEquals(raw, bytes(reader.decode(l, 0, "lz4 batch")));
            }
            // From a heap buffer too (zstd-jni reads direct memory: the codec copies it first).
            ByteBuf heap = Unpooled.copiedBuffer(z);
            assertArrayEquals(raw, bytes(lz4.decode(heap, 0, "heap")));
        } finally {
            z.release();
            l.release();
        }
    }

    /**
     * A fetched chunk arrives in parts (a composite buffer): batches that span two parts decode the same, whatever
     * the codec, from direct or heap parts.
     */
    @Test
    void batchesSpanningThePartsOfAChunkDecode() {
        byte[] raw = new byte[20_000];
        Random r = new Random(11);
        for (int i = 0; i < raw.length; i++) raw[i] = (byte) ('a' + r.nextInt(5));
        for (String name : new String[] {"none", "lz4", "zstd"}) {
            BatchCodec codec = new BatchCodec(name);
            ByteBuf whole = codec.encode(2, 0, 4, 9, raw, 0, raw.length);
            try {
                int len = whole.readableBytes();
                for (int cut : new int[] {5, BatchHeader.SIZE + 3, len / 2, len - 1}) {
                    for (boolean direct : new boolean[] {true, false}) {
                        ByteBuf a = direct ? Unpooled.directBuffer(cut) : Unpooled.buffer(cut);
                        ByteBuf b = direct ? Unpooled.directBuffer(len - cut) : Unpooled.buffer(len - cut);
                        a.writeBytes(whole, 0, cut);
                        b.writeBytes(whole, cut, len - cut);
                        ByteBuf parts = Unpooled.wrappedBuffer(a, b);
                        try {
                            assertArrayEquals(
                                    raw,
                                    bytes(codec.decode(parts, 0, name + " cut at " + cut)),
                                    name + " cut at " + cut + (direct ? " (direct)" : " (heap)"));
                        } finally {
                            parts.release();
                        }
                    }
                }
            } finally {
                whole.release();
            }
        }
    }

    @Test
    void forgedZstdDataIsRefused() {
        forgedDataIsRefused("zstd", BatchHeader.CODEC_ZSTD, "zstd data");
    }

    @Test
    void anUnknownCodecNameIsRefusedWithTheChoices() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new BatchCodec("snappy"));
        assertEquals("unknown compression codec 'snappy': lz4, zstd or none", e.getMessage());
        assertEquals(BatchHeader.CODEC_ZSTD, BatchCodec.codecId("ZSTD"));
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] out = new byte[b.readableBytes()];
        b.getBytes(b.readerIndex(), out);
        return out;
    }

    @Test
    void incompressibleDataStopsBeingTriedThenIsProbedAgain() {
        BatchCodec codec = new BatchCodec("lz4");
        byte[] random = new byte[16 * 1024];
        new Random(1).nextBytes(random);
        int[] used = new int[1];
        for (int i = 0; i < BatchCodec.GIVE_UP_AFTER + BatchCodec.SKIP; i++) {
            assertArrayEquals(random, roundTrip(codec, random, used));
            assertEquals(BatchHeader.CODEC_NONE, used[0]);
        }
        // The data turns compressible: the next probe finds out and compression resumes.
        byte[] zeros = new byte[16 * 1024];
        assertArrayEquals(zeros, roundTrip(codec, zeros, used));
        assertEquals(BatchHeader.CODEC_LZ4, used[0]);
    }

    @Test
    void corruptionIsDetected() {
        BatchCodec codec = new BatchCodec("lz4");
        byte[] raw = "some records".getBytes();
        ByteBuf b = codec.encode(0, 0, 0, 1, raw, 0, raw.length);
        try {
            b.setByte(BatchHeader.SIZE + 2, b.getByte(BatchHeader.SIZE + 2) ^ 0x40);
            CorruptBatchException e =
                    assertThrows(CorruptBatchException.class, () -> codec.decode(b, 0, "partition 5"));
            assertTrue(e.getMessage().contains("partition 5"), e.getMessage());
            assertEquals(StatusCode.SHUFFLE_DATA_LOST, e.status());
        } finally {
            b.release();
        }
        assertFalse(Arrays.equals(raw, new byte[0]));
    }

    /**
     * Batches forged to pass the checksum (as a malicious or buggy writer could) with LZ4 data that lies: each fails
     * as corrupt instead of reading or writing outside its buffers (the flaw of CVE-2025-12183).
     */
    @Test
    void forgedLz4DataIsRefusedNotTrusted() {
        forgedDataIsRefused("lz4", BatchHeader.CODEC_LZ4, "LZ4 data");
    }

    /** Forgeries of a batch of {@code codecName}; each must fail naming {@code what}. */
    private static void forgedDataIsRefused(String codecName, int codecId, String what) {
        BatchCodec codec = new BatchCodec(codecName);
        byte[] raw = new byte[64 * 1024];
        for (int i = 0; i < raw.length; i++) raw[i] = (byte) (i % 7);
        for (int forgery = 0; forgery < 3; forgery++) {
            ByteBuf b = codec.encode(0, 0, 0, 1, raw, 0, raw.length);
            try {
                assertEquals(codecId, BatchHeader.codec(b, 0));
                int dataLength = BatchHeader.dataLength(b, 0);
                if (forgery == 0) { // claims more raw bytes than the data holds
                    b.setInt(16, raw.length + 100);
                } else if (forgery == 1) { // claims fewer: the data runs past the claimed end
                    b.setInt(16, raw.length / 2);
                } else { // garbage in place of the compressed bytes
                    for (int i = 0; i < dataLength; i++) b.setByte(BatchHeader.SIZE + i, 0xF0 | (i & 0x0F));
                }
                BatchHeader.setChecksum(b, 0, codec.checksum(b, 0, dataLength));
                CorruptBatchException e = assertThrows(
                        CorruptBatchException.class, () -> codec.decode(b, 0, "forged"), "forgery " + forgery);
                assertTrue(e.getMessage().contains("corrupt batch in forged: " + what), e.getMessage());
            } finally {
                b.release();
            }
        }
    }

    @Test
    void theChecksumCoversTheHeader() {
        BatchCodec codec = new BatchCodec("none");
        byte[] raw = "records".getBytes();
        for (int field = 0; field < BatchHeader.CHECKED; field += 4) {
            ByteBuf b = codec.encode(4, 0, 9, 2, raw, 0, raw.length);
            try {
                // A forged batch id, map, attempt or record count is as corrupt as a flipped data bit.
                if (field == 20) continue; // dataLength is checked by the reader's bounds before the checksum
                b.setInt(field, b.getInt(field) ^ 1);
                int f = field;
                assertThrows(CorruptBatchException.class, () -> codec.decode(b, 0, "field " + f));
            } finally {
                b.release();
            }
        }
    }
}
