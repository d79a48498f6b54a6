package io.estuary.worker.storage;

import io.netty.buffer.ByteBuf;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * A buffer on its way to a partition's file at a position fixed when it was queued: the write itself, shared by a
 * writer's flushes and by a held copy's write-back. What its end means is the subclass's ({@link #finished}).
 * Runs once, on a flusher thread; it owns its buffer and releases it in {@link #freeBuffer} (as {@link QueuedWrite}
 * settles it).
 */
abstract class FileWrite extends QueuedWrite {
    private final Disk disk;
    private final PartitionFile target;
    private final String name;
    private final ByteBuf buf;
    private final long position;
    /** Nonzero: written with {@code O_DIRECT}, position and length multiples of it ({@link DirectWrites}). */
    private final int directAlignment;

    FileWrite(Disk disk, PartitionFile target, String name, ByteBuf buf, long position, int directAlignment) {
        this.disk = disk;
        this.target = target;
        this.name = name;
        this.buf = buf;
        this.position = position;
        this.directAlignment = directAlignment;
    }

    @Override
    final void write() throws IOException {
        File file = target.file();
        DiskHangInjection.await(file);
        DiskHangInjection.delayWrite(file);
        try (FileChannel ch = target.openForWrite(name, directAlignment > 0)) {
            if (directAlignment > 0) {
                DirectWrites.write(ch, buf, position, directAlignment);
            } else {
                long p = position;
                for (ByteBuffer b : buf.nioBuffers()) {
                    while (b.hasRemaining()) p += ch.write(b, p);
                }
            }
        }
        disk.wrote(buf.readableBytes(), directAlignment > 0);
    }

    @Override
    final void freeBuffer() {
        buf.release();
    }
}
