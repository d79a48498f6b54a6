package io.estuary.client.batch;

import com.github.luben.zstd.Zstd;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;

/**
 * Zstandard frames, through zstd-jni's native library. zstd-jni is not bundled in Estuary's client jars: its JNI
 * entry points are bound to its own package, which the client jars' relocation would break. Spark (2.3 on) ships it,
 * so a Spark application has it as it is; elsewhere it must be put on the class path ({@link #check} says so before
 * any task runs). Only the direct-buffer calls are used: they exist, with these signatures, in every zstd-jni from
 * 1.3 (Spark 2.4) to 1.5 (Spark 3.5 and 4).
 *
 * <p>Confined to its {@link BatchCodec}'s thread. Its scratch memory is the thread's ({@code SCRATCH}), JDK direct
 * buffers that nothing releases explicitly: they live as long as the thread. A decompressed batch is a view of that
 * scratch, valid until the thread's next call.
 */
final class ZstdBlocks implements BlockCompressor {
    /**
     * Direct scratch buffers (zstd-jni reads and writes native memory), grown on demand, one pair per thread: a codec
     * lives for one task and has no close, while the threads that run tasks are few and long-lived, so this memory
     * stays bounded (threads × the largest batch) without waiting for the garbage collector to free it.
     */
    private static final ThreadLocal<ByteBuffer[]> SCRATCH = ThreadLocal.withInitial(
            () -> new ByteBuffer[] {ByteBuffer.allocateDirect(0), ByteBuffer.allocateDirect(0)});

    private final int level;

    ZstdBlocks(int level) {
        check();
        this.level = level;
    }

    /** Fails with the fix in the message when zstd-jni is not on the class path. */
    static void check() {
        try {
            Class.forName("com.github.luben.zstd.Zstd", false, ZstdBlocks.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            throw new IllegalArgumentException(
                    "estuary.client.compression.codec=zstd needs zstd-jni (com.github.luben:zstd-jni) on the "
                            + "class path: Spark 2.3 and later ship it; elsewhere add its jar, or choose lz4",
                    e);
        }
    }

    @Override
    public int maxCompressedLength(int length) {
        return (int) Math.min(Integer.MAX_VALUE - 64, Zstd.compressBound(length));
    }

    @Override
    public int compress(byte[] raw, int offset, int length, ByteBuf dst, int at, int room) {
        ByteBuffer in = scratch(0, length);
        in.put(raw, offset, length);
        long n = Zstd.compressDirectByteBuffer(dst.nioBuffer(at, room), 0, room, in, 0, length, level);
        if (Zstd.isError(n)) throw new IllegalStateException("zstd compression failed: " + Zstd.getErrorName(n));
        return (int) n;
    }

    @Override
    public ByteBuf decompress(ByteBuf data, int offset, int dataLength, int rawLength, String where) {
        ByteBuffer src;
        ByteBuffer[] parts = data.nioBuffers(offset, dataLength);
        if (parts.length == 1 && parts[0].isDirect()) {
            src = parts[0];
        } else { // zstd-jni reads direct memory only (and one range)
            src = scratch(0, dataLength);
            data.getBytes(offset, (ByteBuffer) src.duplicate().limit(dataLength));
        }
        ByteBuffer out = scratch(1, rawLength);
        long n;
        try {
            n = Zstd.decompressDirectByteBuffer(out, 0, rawLength, src, 0, dataLength);
        } catch (RuntimeException e) { // zstd-jni 1.5 throws ZstdException where 1.3 returns an error code
            throw new CorruptBatchException(
                    "corrupt batch in " + where + ": zstd data does not decompress (" + e.getMessage() + ")");
        }
        if (Zstd.isError(n)) {
            throw new CorruptBatchException(
                    "corrupt batch in " + where + ": zstd data does not decompress (" + Zstd.getErrorName(n) + ")");
        }
        if (n != rawLength) {
            throw new CorruptBatchException("corrupt batch in " + where + ": zstd data decompresses to " + n
                    + " bytes, its header says " + rawLength);
        }
        return Unpooled.wrappedBuffer((ByteBuffer) out.duplicate().clear().limit(rawLength));
    }

    /** This thread's scratch buffer {@code which} (0: input, 1: output), cleared, with room for {@code size} bytes. */
    private static ByteBuffer scratch(int which, int size) {
        ByteBuffer[] mine = SCRATCH.get();
        if (mine[which].capacity() < size) {
            mine[which] = ByteBuffer.allocateDirect(Math.max(size, mine[which].capacity() * 2));
        }
        mine[which].clear();
        return mine[which];
    }
}
