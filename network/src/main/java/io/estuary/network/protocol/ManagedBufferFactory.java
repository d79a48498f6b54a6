package io.estuary.network.protocol;

import io.estuary.network.buffer.ManagedBuffer;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.netty.buffer.ByteBuf;

/** Turns what is left of a frame into its body: a retained slice, so the data is never copied. */
final class ManagedBufferFactory {
    static final ManagedBufferFactory INSTANCE = new ManagedBufferFactory();

    ManagedBuffer rest(ByteBuf in) {
        return new NettyManagedBuffer(in.readRetainedSlice(in.readableBytes()));
    }
}
