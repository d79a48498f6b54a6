package io.estuary.worker.fetch;

import io.estuary.network.buffer.ManagedBuffer;
import io.estuary.worker.storage.DiskHangInjection;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.DefaultFileRegion;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;

/**
 * A byte range of a partition file that is already open and already read, so that sending it (with sendfile) does
 * no disk I/O on the network thread: the file is opened, checked and read through once ({@link #open}) on the disk's
 * reader threads, which leaves its pages in the page cache; the send then copies them from memory. (The network
 * thread would wait on the disk only if the kernel evicted those pages in the moment between, under memory pressure
 * severe enough to take pages read microseconds before.) A read error shows here, on the reader thread, and fails
 * the chunk as a disk failure instead of breaking the connection mid-send.
 *
 * <p>The channel belongs to this buffer until {@link #convertToNetty} hands it to a {@link DefaultFileRegion}, which
 * closes it once sent; {@link #release} closes it only if it was never handed over. On a TLS channel
 * {@link #convertToNettyBytes} copies the range into a pooled buffer instead and closes the file. Thread-safe.
 */
final class OpenFileSegment extends ManagedBuffer {
    private final FileChannel channel;
    private final long offset;
    private final long length;
    private boolean handedOver;
    private boolean closed;

    private OpenFileSegment(FileChannel channel, long offset, long length) {
        this.channel = channel;
        this.offset = offset;
        this.length = length;
    }

    /** Per reader thread: where ranges are read through (the bytes are discarded; the page cache keeps them). */
    private static final ThreadLocal<ByteBuffer> SCRATCH =
            ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(256 << 10));

    /** Opens {@code file}, checks that it holds the range and reads the range through; blocking file I/O. */
    static OpenFileSegment open(File file, long offset, long length) throws IOException {
        DiskHangInjection.await(file);
        FileChannel ch;
        try {
            ch = FileChannel.open(file.toPath(), StandardOpenOption.READ);
        } catch (IOException e) {
            throw new IOException(file + " cannot be read (deleted?): " + e, e);
        }
        try {
            long size = ch.size();
            if (size < offset + length) {
                throw new IOException(file + " holds " + size + " bytes, fewer than " + (offset + length));
            }
            readThrough(file, ch, offset, length);
            return new OpenFileSegment(ch, offset, length);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /** Reads the range from disk on this thread, so that the send on a network thread finds it in memory. */
    private static void readThrough(File file, FileChannel ch, long offset, long length) throws IOException {
        ByteBuffer buf = SCRATCH.get();
        long end = offset + length;
        for (long pos = offset; pos < end; ) {
            buf.clear();
            if (end - pos < buf.capacity()) buf.limit((int) (end - pos));
            int n = ch.read(buf, pos);
            if (n < 0) throw new IOException(file + " ended at " + pos + ", before " + end);
            pos += n;
        }
    }

    @Override
    public long size() {
        return length;
    }

    @Override
    public synchronized Object convertToNetty() throws IOException {
        if (closed || handedOver) throw new IOException("file segment already sent or released");
        handedOver = true;
        return new DefaultFileRegion(channel, offset, length);
    }

    /** For a TLS channel: the range (in the page cache already) read into a pooled buffer; closes the file. */
    @Override
    public synchronized Object convertToNettyBytes(ByteBufAllocator alloc) throws IOException {
        if (closed || handedOver) throw new IOException("file segment already sent or released");
        ByteBuf buf = alloc.directBuffer((int) length);
        try {
            while (buf.readableBytes() < length) {
                int n = buf.writeBytes(channel, offset + buf.readableBytes(), (int) length - buf.readableBytes());
                if (n < 0) throw new IOException("the file ended before " + (offset + length));
            }
            return buf;
        } catch (IOException | RuntimeException e) {
            buf.release();
            throw e;
        } finally {
            release(); // the bytes are copied: the file is no longer needed
        }
    }

    @Override
    public synchronized ByteBuf toByteBuf() throws IOException {
        ByteBuf buf = Unpooled.buffer((int) length);
        while (buf.readableBytes() < length) {
            int n = buf.writeBytes(channel, offset + buf.readableBytes(), (int) length - buf.readableBytes());
            if (n < 0) throw new IOException("the file ended before " + (offset + length));
        }
        return buf;
    }

    @Override
    public ManagedBuffer retain() {
        return this;
    }

    /** Closes the file unless Netty owns it now (it closes it after sending). */
    @Override
    public synchronized void release() {
        if (handedOver || closed) return;
        closed = true;
        try {
            channel.close();
        } catch (IOException ignored) {
            // nothing was written through it
        }
    }
}
