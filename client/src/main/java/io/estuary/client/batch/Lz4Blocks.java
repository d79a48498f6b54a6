package io.estuary.client.batch;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * LZ4 blocks (lz4-java's fast compressor: the engine's native one where it has it, {@link EngineLz4Compressor}, else
 * the bundled Java one). Decompresses into a heap scratch array it reuses, valid until the next
 * call; it holds no pooled or direct memory, so nothing needs releasing. Confined to its {@link BatchCodec}'s thread.
 */
final class Lz4Blocks implements BlockCompressor {
    /** The bundled copy (relocated in the shaded jars, so its Java implementation there). */
    static final LZ4Factory LZ4 = LZ4Factory.fastestInstance();

    private final LZ4Compressor compressor = LZ4.fastCompressor();
    private final EngineLz4Compressor engineCompressor = EngineLz4Compressor.NATIVE;
    // The safe decompressor checks every read against the compressed length: a crafted or corrupt batch fails
    // instead of reading past it (the "fast" one trusts the input, the flaw behind CVE-2025-12183).
    private final LZ4SafeDecompressor decompressor = LZ4.safeDecompressor();
    private byte[] scratch = new byte[0];
    /** Where compressed bytes that span a fetched chunk's parts are gathered first. */
    private byte[] gathered = new byte[0];

    @Override
    public int maxCompressedLength(int length) {
        return compressor.maxCompressedLength(length);
    }

    @Override
    public int compress(byte[] raw, int offset, int length, ByteBuf out, int at, int room) {
        // Into direct memory only: lz4-java before 1.4 (Spark 1.6's) ignores a heap destination's array offset.
        if (engineCompressor != null && out.isDirect()) {
            return engineCompressor.compress(ByteBuffer.wrap(raw), offset, length, out.nioBuffer(at, room), 0, room);
        }
        return compressor.compress(ByteBuffer.wrap(raw), offset, length, out.nioBuffer(at, room), 0, room);
    }

    @Override
    public ByteBuf decompress(ByteBuf data, int offset, int dataLength, int rawLength, String where) {
        if (scratch.length < rawLength) scratch = new byte[Math.max(rawLength, scratch.length * 2)];
        int n;
        try {
            ByteBuffer[] parts = data.nioBuffers(offset, dataLength);
            if (parts.length == 1) {
                n = decompressor.decompress(parts[0], 0, dataLength, ByteBuffer.wrap(scratch), 0, rawLength);
            } else { // gathered into an array kept for it, not into a new buffer per batch
                if (gathered.length < dataLength) gathered = new byte[Math.max(dataLength, gathered.length * 2)];
                data.getBytes(offset, gathered, 0, dataLength);
                n = decompressor.decompress(gathered, 0, dataLength, scratch, 0, rawLength);
            }
        } catch (LZ4Exception e) {
            throw new CorruptBatchException(
                    "corrupt batch in " + where + ": LZ4 data does not decompress (" + e.getMessage() + ")");
        }
        if (n != rawLength) {
            throw new CorruptBatchException("corrupt batch in " + where + ": LZ4 data decompresses to " + n
                    + " bytes, its header says " + rawLength);
        }
        return Unpooled.wrappedBuffer(scratch, 0, rawLength);
    }
}
