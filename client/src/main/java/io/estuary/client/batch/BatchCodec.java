package io.estuary.client.batch;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.zip.CRC32;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * Encodes serialized records into a batch (header + possibly compressed bytes) and decodes it back. Batches live
 * in pooled direct buffers, so nothing is copied again on the way to the socket and no garbage is left per batch.
 * One instance per task: it keeps a scratch buffer for decompression.
 */
public final class BatchCodec {
    private static final LZ4Factory LZ4 = LZ4Factory.fastestInstance();
    private static final PooledByteBufAllocator ALLOC = io.estuary.network.netty.NettyUtils.allocator();

    private final int codec;
    private final LZ4Compressor compressor;
    // The safe decompressor checks every read against the compressed length: a crafted or corrupt batch fails
    // instead of reading past it (the "fast" one trusts the input, the flaw behind CVE-2025-12183).
    private final LZ4SafeDecompressor decompressor = LZ4.safeDecompressor();
    private final CRC32 crc = new CRC32();
    private byte[] scratch = new byte[0];
    /**
     * Adaptive compression: after {@link #GIVE_UP_AFTER} batches in a row that LZ4 could not shrink, the next
     * {@link #SKIP} batches are stored without trying, then LZ4 is tried again. Incompressible data (already
     * compressed or random) then costs no compression CPU; compressible data is compressed as always.
     */
    static final int GIVE_UP_AFTER = 4;

    static final int SKIP = 32;
    private int incompressibleStreak;
    private int toSkip;

    public BatchCodec(String codecName) {
        this.codec = "lz4".equalsIgnoreCase(codecName) ? BatchHeader.CODEC_LZ4 : BatchHeader.CODEC_NONE;
        this.compressor = codec == BatchHeader.CODEC_LZ4 ? LZ4.fastCompressor() : null;
    }

    /**
     * A complete batch (header and data) in a pooled direct buffer the caller releases. {@code records} is how many
     * records {@code raw} holds; it travels in the header for end-to-end counts.
     */
    public ByteBuf encode(int mapId, int attemptId, int batchId, int records, byte[] raw, int offset, int length) {
        int room = codec == BatchHeader.CODEC_LZ4 ? compressor.maxCompressedLength(length) : length;
        ByteBuf out = ALLOC.directBuffer(BatchHeader.SIZE + room);
        try {
            ByteBuffer data = out.nioBuffer(BatchHeader.SIZE, room);
            int usedCodec = BatchHeader.CODEC_NONE;
            int dataLength = length;
            if (codec == BatchHeader.CODEC_LZ4 && toSkip > 0) {
                toSkip--;
            } else if (codec == BatchHeader.CODEC_LZ4) {
                int compressed = compressor.compress(ByteBuffer.wrap(raw), offset, length, data, 0, room);
                if (compressed < length - length / 16) {
                    usedCodec = BatchHeader.CODEC_LZ4;
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
        crc.update(b.nioBuffer(at, BatchHeader.CHECKED));
        crc.update(b.nioBuffer(at + BatchHeader.SIZE, dataLength));
        return (int) crc.getValue();
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
        switch (BatchHeader.codec(data, at)) {
            case BatchHeader.CODEC_NONE:
                return data.slice(offset, dataLength);
            case BatchHeader.CODEC_LZ4:
                if (scratch.length < rawLength) scratch = new byte[Math.max(rawLength, scratch.length * 2)];
                int n;
                try {
                    n = decompressor.decompress(
                            data.nioBuffer(offset, dataLength), 0, dataLength, ByteBuffer.wrap(scratch), 0, rawLength);
                } catch (LZ4Exception e) {
                    throw new CorruptBatchException(
                            "corrupt batch in " + where + ": LZ4 data does not decompress (" + e.getMessage() + ")");
                }
                if (n != rawLength) {
                    throw new CorruptBatchException("corrupt batch in " + where + ": LZ4 data decompresses to " + n
                            + " bytes, its header says " + rawLength);
                }
                return Unpooled.wrappedBuffer(scratch, 0, rawLength);
            default:
                throw new CorruptBatchException(
                        "corrupt batch in " + where + ": unknown codec " + BatchHeader.codec(data, at));
        }
    }
}
