package io.estuary.network.buffer;

import io.netty.buffer.ByteBuf;

/**
 * The body of a frame: bytes in memory or a segment of a file. Writing it hands it to Netty without copying
 * (a file segment goes out with sendfile).
 */
public abstract class ManagedBuffer {
    public abstract long size();

    /** A ByteBuf or a FileRegion that Netty writes and then releases. */
    public abstract Object convertToNetty() throws java.io.IOException;

    /** The bytes as a ByteBuf the caller owns (reads the file for file segments). */
    public abstract ByteBuf toByteBuf() throws java.io.IOException;

    public abstract ManagedBuffer retain();

    public abstract void release();
}
