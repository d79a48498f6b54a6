package io.estuary.client.batch;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's own lz4-java native (JNI) compressor, borrowed for {@link Lz4Blocks} when the engine's class path has
 * lz4-java under its original package and its native library loads (Spark ships it).
 *
 * <p>Why: the shaded client jars bundle lz4-java relocated, and a relocated class cannot bind the native library, whose
 * JNI symbols name the original package; so the bundled copy compresses in Java, slower per byte and, in a fresh
 * executor JVM, several hundred milliseconds of the JIT compiler's time on the cores the tasks use
 * ({@code bench/profile.sh small}: {@code LZ4JavaSafeCompressor.compress} among the longest C2 compilations).
 *
 * <p>Only to compress: its input is this process's own records. Decompression reads bytes from the network and stays
 * with the bundled fork's safe decompressor (the lz4-java releases engines ship, 1.8.0 and older, have
 * CVE-2025-12183). Both speak the LZ4 block format, so either side may be either implementation.
 *
 * <p>Thread-safe: the native compressor keeps no state between calls.
 */
final class EngineLz4Compressor {
    private static final Logger LOG = LoggerFactory.getLogger(EngineLz4Compressor.class);

    /** The engine's native compressor, or null where there is none (then the bundled Java one compresses). */
    static final EngineLz4Compressor NATIVE = load(EngineLz4Compressor.class.getClassLoader());

    /** {@code LZ4Compressor.compress(ByteBuffer, int, int, ByteBuffer, int, int)} bound to the native instance. */
    private final MethodHandle compress;

    private EngineLz4Compressor(MethodHandle compress) {
        this.compress = compress;
    }

    /**
     * The native compressor the engine's lz4-java gives {@code loader}, or null (no such class, no native library for
     * this platform, or an API this code does not know), with the reason logged once.
     */
    static EngineLz4Compressor load(ClassLoader loader) {
        // Built at run time: the shade plugin rewrites string constants that name a relocated package.
        String pkg = String.join(".", "net", "jpountz", "lz4");
        try {
            Class<?> factoryClass = Class.forName(pkg + ".LZ4Factory", true, loader);
            Class<?> compressorClass = Class.forName(pkg + ".LZ4Compressor", true, loader);
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            Object factory = lookup.findStatic(factoryClass, "nativeInstance", MethodType.methodType(factoryClass))
                    .invoke();
            Object compressor = lookup.findVirtual(
                            factoryClass, "fastCompressor", MethodType.methodType(compressorClass))
                    .invoke(factory);
            MethodHandle compress = lookup.findVirtual(
                            compressorClass,
                            "compress",
                            MethodType.methodType(
                                    int.class,
                                    ByteBuffer.class,
                                    int.class,
                                    int.class,
                                    ByteBuffer.class,
                                    int.class,
                                    int.class))
                    .bindTo(compressor);
            EngineLz4Compressor found = new EngineLz4Compressor(compress);
            found.selfCheck();
            LOG.info(
                    "LZ4 compresses with the engine's native lz4-java ({})",
                    factoryClass.getProtectionDomain().getCodeSource() == null
                            ? "no code source"
                            : factoryClass.getProtectionDomain().getCodeSource().getLocation());
            return found;
        } catch (Throwable t) { // a missing class, an UnsatisfiedLinkError, an old API: all mean "not available"
            LOG.info(
                    "LZ4 compresses with the client's bundled Java lz4-java (the engine's native one: {})",
                    t.toString());
            return null;
        }
    }

    /**
     * Compresses {@code src[srcOffset, srcOffset + length)} into {@code dest} at {@code destOffset}, at most
     * {@code room} bytes; returns the compressed length.
     */
    int compress(ByteBuffer src, int srcOffset, int length, ByteBuffer dest, int destOffset, int room) {
        try {
            return (int) compress.invokeExact(src, srcOffset, length, dest, destOffset, room);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) { // compress declares no checked exception
            throw new IllegalStateException(t);
        }
    }

    /** Refuses a library whose output the bundled decompressor would not read back (never seen; cheap to check). */
    private void selfCheck() {
        byte[] raw = new byte[256];
        for (int i = 0; i < raw.length; i++) raw[i] = (byte) (i % 7);
        ByteBuffer out = ByteBuffer.allocate(raw.length + raw.length / 255 + 16);
        int n = compress(ByteBuffer.wrap(raw), 0, raw.length, out, 0, out.capacity());
        byte[] back = new byte[raw.length];
        int got = Lz4Blocks.LZ4.safeDecompressor().decompress(out.array(), 0, n, back, 0, back.length);
        if (got != raw.length || !Arrays.equals(raw, back)) {
            throw new IllegalStateException("the engine's LZ4 output does not read back");
        }
    }
}
