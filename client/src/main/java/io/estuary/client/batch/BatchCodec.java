package io.estuary.client.batch;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.Locale;
import java.util.zip.CRC32;

/**
 * Encodes serialized records into a batch (header + possibly compressed bytes) and decodes it back. Batches live
 * in pooled direct buffers, so nothing is copied again on the way to the socket and no garbage is left per batch.
 * Encodes with the codec it was made for ({@code lz4}, {@code zstd} or {@code none}); decodes any, as each batch's
 * header says. One instance per task: it keeps scratch buffers for decompression.
 */
public final class BatchCodec {
    private static final PooledByteBufAllocator ALLOC = io.estuary.network.netty.NettyUtils.allocator();

    private final int codec;
    private final int zstdLevel;
    /** The encoder's compressor; null for {@code none}. */
    private final BlockCompressor compressor;
    /** Decompressors by codec id, made on first use. */
    private Lz4Blocks lz4;

    private ZstdBlocks zstd;
    private final CRC32 crc = new CRC32();
    /**
     * Adaptive compression: after {@link #GIVE_UP_AFTER} batches in a row that the codec could not shrink, the next
     * {@link #SKIP} batches are stored without trying, then compression is tried again. Incompressible data (already
     * compressed or random) then costs no compression CPU; compressible data is compressed as always.
     */
    static final int GIVE_UP_AFTER = 4;

    static final int SKIP = 32;
    private int incompressibleStreak;
    private int toSkip;

    /** A codec for {@code lz4}, {@code zstd} (at level 1) or {@code none}. */
    public BatchCodec(String codecName) {
        this(codecName, 1);
    }

    /** @param zstdLevel the Zstandard level, when {@code codecName} is {@code zstd} */
    public BatchCodec(String codecName, int zstdLevel) {
        this.codec = codecId(codecName);
        this.zstdLevel = zstdLevel;
        this.compressor = blocks(codec);
    }

    /**
     * The header's id of a codec name; an unknown name is refused. For {@code zstd}, also checks that zstd-jni is
     * on the class path, so that an application without it fails when it starts instead of in every task.
     */
    public static int codecId(String codecName) {
        switch (codecName.toLowerCase(Locale.ROOT)) {
            case "lz4":
                return BatchHeader.CODEC_LZ4;
            case "zstd":
                ZstdBlocks.check();
                return BatchHeader.CODEC_ZSTD;
            case "none":
                return BatchHeader.CODEC_NONE;
            default:
                throw new IllegalArgumentException("unknown compression codec '" + codecName + "': lz4, zstd or none");
        }
    }

    /** The compressor of a codec id, made on first use (null for none, or an id this build does not know). */
    private BlockCompressor blocks(int id) {
        switch (id) {
            case BatchHeader.CODEC_LZ4:
                if (lz4 == null) lz4 = new Lz4Blocks();
                return lz4;
            case BatchHeader.CODEC_ZSTD:
                if (zstd == null) zstd = new ZstdBlocks(zstdLevel);
                return zstd;
            default:
                return null;
        }
    }

    /**
     * A complete batch (header and data) in a pooled direct buffer the caller releases. {@code records} is how many
     * records {@code raw} holds; it travels in the header for end-to-end counts.
     */
    public ByteBuf encode(int mapId, int attemptId, int batchId, int records, byte[] raw, int offset, int length) {
        int room = compressor != null ? Math.max(length, compressor.maxCompressedLength(length)) : length;
        ByteBuf out = ALLOC.directBuffer(BatchHeader.SIZE + room);
        try {
            int usedCodec = BatchHeader.CODEC_NONE;
            int dataLength = length;
            if (compressor != null && toSkip > 0) {
                toSkip--;
            } else if (compressor != null) {
                int compressed = compressor.compress(raw, offset, length, out, BatchHeader.SIZE, room);
                if (compressed < length - length / 16) {
                    usedCodec = codec;
                    dataLength = compressed;
                    incompressibleStreak = 0;
                } else if (++incompressibleStreak >= GIVE_UP_AFTER) { // stored as it is; stop trying for a while
                    incompressibleStreak = 0;
                    toSkip = SKIP;
                }
            }
            if (usedCodec == BatchHeader.CODEC_NONE) out.setBytes(BatchHeader.SIZE, raw, offset, length);
            BatchHeader.write(out, 0, mapId, attemptId, batchId, usedCodec, length, dataLength, records);
            BatchHeader.setChecksum(out, 0, checksum(out, 0, dataLength));
            out.setIndex(0, BatchHeader.SIZE + dataLength);
            return out;
        } catch (RuntimeException e) {
            out.release();
            throw e;
        }
    }

    /**
     * CRC32 over the checked header bytes of the batch at {@code at} and its {@code dataLength} data bytes.
     * Package-private so tests can forge batches whose checksum holds.
     */
    int checksum(ByteBuf b, int at, int dataLength) {
        crc.reset();
        update(b, at, BatchHeader.CHECKED);
        update(b, at + BatchHeader.SIZE, dataLength);
        return (int) crc.getValue();
    }

    /** Over the buffers the range lies in: a batch that spans a fetched chunk's parts is not merged for this. */
    private void update(ByteBuf b, int at, int length) {
        for (java.nio.ByteBuffer part : b.nioBuffers(at, length)) crc.update(part);
    }

    /** Encodes into a heap buffer; for tests and tools that build batches by hand. */
    public byte[] encodeToArray(
            int mapId, int attemptId, int batchId, int records, byte[] raw, int offset, int length) {
        ByteBuf b = encode(mapId, attemptId, batchId, records, raw, offset, length);
        try {
            byte[] out = new byte[b.readableBytes()];
            b.getBytes(b.readerIndex(), out);
            return out;
        } finally {
            b.release();
        }
    }

    /**
     * Checks and decodes the batch whose header starts at {@code at} in {@code data} (its data must follow in full).
     * The result is valid until the next call: it is a view of {@code data} (uncompressed batches) or of this codec's
     * scratch buffer. A checksum mismatch or an unknown codec throws {@link CorruptBatchException}.
     */
    public ByteBuf decode(ByteBuf data, int at, String where) {
        int dataLength = BatchHeader.dataLength(data, at);
        int rawLength = BatchHeader.rawLength(data, at);
        if (checksum(data, at, dataLength) != BatchHeader.checksum(data, at)) {
            throw new CorruptBatchException("corrupt batch in " + where + ": checksum mismatch over " + dataLength
                    + " bytes (map " + BatchHeader.mapId(data, at) + " batch " + BatchHeader.batchId(data, at) + ")");
        }
        int offset = at + BatchHeader.SIZE;
        int id = BatchHeader.codec(data, at);
        if (id == BatchHeader.CODEC_NONE) return data.slice(offset, dataLength);
        BlockCompressor d = blocks(id);
        if (d == null) throw new CorruptBatchException("corrupt batch in " + where + ": unknown codec " + id);
        return d.decompress(data, offset, dataLength, rawLength, where);
    }
}
