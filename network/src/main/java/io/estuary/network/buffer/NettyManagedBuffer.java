package io.estuary.network.buffer;

import io.netty.buffer.ByteBuf;

/** A body held in a Netty buffer. */
public final class NettyManagedBuffer extends ManagedBuffer {
    private final ByteBuf buf;

    public NettyManagedBuffer(ByteBuf buf) {
        this.buf = buf;
    }

    @Override
    public long size() {
        return buf.readableBytes();
    }

    @Override
    public Object convertToNetty() {
        return buf.duplicate().retain();
    }

    @Override
    public ByteBuf toByteBuf() {
        return buf.duplicate().retain();
    }

    @Override
    public ManagedBuffer retain() {
        buf.retain();
        return this;
    }

    @Override
    public void release() {
        buf.release();
    }

    public ByteBuf buf() {
        return buf;
    }
}
