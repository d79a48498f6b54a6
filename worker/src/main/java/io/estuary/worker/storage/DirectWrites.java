package io.estuary.worker.storage;

import io.netty.buffer.ByteBuf;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Writes that bypass the page cache ({@code O_DIRECT}). A buffered write costs the kernel a copy into the page cache
 * and its bookkeeping, about a CPU-second per GB on the machines we measured, on the cores the engine's tasks use;
 * a direct write hands the bytes to the device. Such a write must start at a file position, and cover a length, that
 * are multiples of the file system's block size, from memory aligned the same way: the bytes go through an aligned
 * staging buffer of the flusher thread (a user-space copy, a tenth of the kernel's), and the partition's writer
 * keeps positions aligned ({@link PartitionFileWriter}).
 *
 * <p>Alignment is at least the page size, so a buffered write that follows (a file's last, partial block) never
 * shares a page with a direct write that may still be running on another flusher thread. Thread-safe: the staging
 * buffer is per thread, allocated at its first direct write and kept for the thread's life (1 MiB of the JVM's direct
 * memory per flusher thread, freed with the thread); {@link #write} neither retains nor releases the caller's buffer.
 */
final class DirectWrites {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(DirectWrites.class);
    private static final int PAGE = 4096;
    /** Bytes staged and written per system call. */
    static final int STAGING_BYTES = 1 << 20;

    private static final ThreadLocal<ByteBuffer> STAGING = new ThreadLocal<>();

    private DirectWrites() {}

    /**
     * The alignment direct writes need in {@code dir}, or 0 when its file system does not take them (tmpfs, some
     * network file systems) or the JVM cannot open files that way: found by writing one block to a scratch file.
     */
    static int alignment(File dir) {
        Path probe = dir.toPath().resolve(".estuary-direct-io-probe");
        try {
            int block = (int) Files.getFileStore(dir.toPath()).getBlockSize();
            int align = Math.max(PAGE, block);
            if (Integer.bitCount(align) != 1 || align > STAGING_BYTES) return 0;
            ByteBuffer b = ByteBuffer.allocateDirect(2 * align).alignedSlice(align);
            b.limit(align);
            try (FileChannel ch = FileChannel.open(probe, writeOptions(true))) {
                while (b.hasRemaining()) ch.write(b, b.position());
            }
            return align;
        } catch (IOException | RuntimeException e) {
            LOG.info("{} does not take direct writes ({}): its partitions are written through the page cache", dir, e);
            return 0;
        } finally {
            try {
                Files.deleteIfExists(probe);
            } catch (IOException e) {
                // a leftover probe file is harmless; the next start overwrites it
            }
        }
    }

    /** Options to open a partition file for writing, direct or through the page cache. */
    static OpenOption[] writeOptions(boolean direct) {
        return direct
                ? new OpenOption[] {
                    StandardOpenOption.CREATE, StandardOpenOption.WRITE, com.sun.nio.file.ExtendedOpenOption.DIRECT
                }
                : new OpenOption[] {StandardOpenOption.CREATE, StandardOpenOption.WRITE};
    }

    /**
     * Writes {@code buf}'s readable bytes at {@code position} of a channel opened with {@code O_DIRECT}; both are
     * multiples of {@code alignment}. Does not consume {@code buf}.
     */
    static void write(FileChannel ch, ByteBuf buf, long position, int alignment) throws IOException {
        int n = buf.readableBytes();
        if (n % alignment != 0 || position % alignment != 0) {
            throw new IllegalArgumentException(
                    n + " bytes at " + position + " are not aligned to " + alignment + " for a direct write");
        }
        ByteBuffer staging = staging(alignment);
        int from = buf.readerIndex();
        int end = from + n;
        long p = position;
        while (from < end) {
            int len = Math.min(staging.capacity(), end - from);
            staging.clear().limit(len);
            buf.getBytes(from, staging);
            staging.flip();
            while (staging.hasRemaining()) p += ch.write(staging, p);
            from += len;
        }
    }

    private static ByteBuffer staging(int alignment) {
        ByteBuffer b = STAGING.get();
        if (b == null || b.alignmentOffset(0, alignment) != 0) {
            b = ByteBuffer.allocateDirect(STAGING_BYTES + alignment).alignedSlice(alignment);
            b.limit(STAGING_BYTES);
            b = b.slice();
            STAGING.set(b);
        }
        return b;
    }
}
