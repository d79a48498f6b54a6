package io.estuary.network.buffer;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The body of a frame: bytes in memory or a segment of a file. Writing it hands it to Netty without copying
 * (a file segment goes out with sendfile, or read into a pooled buffer where TLS rules sendfile out).
 */
public abstract class ManagedBuffer {
    public abstract long size();

    /** A ByteBuf or a FileRegion that Netty writes and then releases. */
    public abstract Object convertToNetty() throws java.io.IOException;

    /**
     * What to write to a channel that cannot send a {@code FileRegion} (TLS encrypts in memory): a ByteBuf that
     * Netty writes and then releases. File segments read their range into a buffer from {@code alloc} (pooled, so
     * the fetch path allocates nothing new per chunk); bytes already in memory are passed as they are.
     */
    public Object convertToNettyBytes(ByteBufAllocator alloc) throws java.io.IOException {
        return convertToNetty();
    }

    /** The bytes as a ByteBuf the caller owns (reads the file for file segments). */
    public abstract ByteBuf toByteBuf() throws java.io.IOException;

    public abstract ManagedBuffer retain();

    public abstract void release();
}
