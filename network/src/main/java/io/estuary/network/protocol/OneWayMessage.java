package io.estuary.network.protocol;

import io.estuary.network.buffer.ManagedBuffer;
import io.netty.buffer.ByteBuf;

/** A message that gets no answer. */
public final class OneWayMessage extends AbstractMessage {
    public OneWayMessage(ManagedBuffer body) {
        super(body);
    }

    @Override
    public MessageType type() {
        return MessageType.ONE_WAY;
    }

    @Override
    public int headerLength() {
        return 0;
    }

    @Override
    public void encodeHeader(ByteBuf out) {}

    static OneWayMessage decode(ByteBuf in, ManagedBufferFactory bodies) {
        return new OneWayMessage(bodies.rest(in));
    }
}
