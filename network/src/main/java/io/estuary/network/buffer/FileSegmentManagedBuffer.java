package io.estuary.network.buffer;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.DefaultFileRegion;
import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.channels.FileChannel;

/**
 * A byte range of a file, sent with zero-copy (sendfile) when written to a channel, or read into a pooled buffer for
 * a TLS channel.
 */
public final class FileSegmentManagedBuffer extends ManagedBuffer {
    private final File file;
    private final long offset;
    private final long length;

    public FileSegmentManagedBuffer(File file, long offset, long length) {
        this.file = file;
        this.offset = offset;
        this.length = length;
    }

    @Override
    public long size() {
        return length;
    }

    /**
     * Opens the file now, so a missing or unreadable file fails this request alone instead of the connection
     * that would otherwise discover it while sending.
     */
    public FileSegmentManagedBuffer open() throws IOException {
        if (!file.canRead()) throw new IOException(file + " cannot be read (deleted?)");
        if (file.length() < offset + length) {
            throw new IOException(file + " holds " + file.length() + " bytes, fewer than " + (offset + length));
        }
        return this;
    }

    @Override
    public Object convertToNetty() {
        // DefaultFileRegion opens the file when it is sent and closes it once transferred.
        return new DefaultFileRegion(file, offset, length);
    }

    @Override
    public Object convertToNettyBytes(ByteBufAllocator alloc) throws IOException {
        ByteBuf buf = alloc.directBuffer((int) length);
        try (RandomAccessFile raf = new RandomAccessFile(file, "r");
                FileChannel ch = raf.getChannel()) {
            while (buf.readableBytes() < length) {
                int n = buf.writeBytes(ch, offset + buf.readableBytes(), (int) length - buf.readableBytes());
                if (n < 0) throw new IOException(file + " ended before " + (offset + length));
            }
            return buf;
        } catch (IOException | RuntimeException e) {
            buf.release();
            throw e;
        }
    }

    @Override
    public ByteBuf toByteBuf() throws IOException {
        ByteBuf buf = Unpooled.buffer((int) length);
        try (RandomAccessFile raf = new RandomAccessFile(file, "r");
                FileChannel ch = raf.getChannel()) {
            buf.writeBytes(ch, offset, (int) length);
        }
        return buf;
    }

    @Override
    public ManagedBuffer retain() {
        return this;
    }

    @Override
    public void release() {}

    @Override
    public String toString() {
        return file + "[" + offset + "+" + length + "]";
    }
}
