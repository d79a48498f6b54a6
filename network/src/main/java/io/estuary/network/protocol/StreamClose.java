package io.estuary.network.protocol;

import io.estuary.network.buffer.ManagedBuffer;
import io.netty.buffer.ByteBuf;

/**
 * A reader is done with a stream before its last chunk (it stopped early, or goes to another copy): the server may
 * drop it now instead of when it idles out. No answer; a stream the server does not know (finished, expired, or
 * another connection's) is ignored. Immutable.
 */
public final class StreamClose implements Message {
    public final long streamId;

    public StreamClose(long streamId) {
        this.streamId = streamId;
    }

    @Override
    public MessageType type() {
        return MessageType.STREAM_CLOSE;
    }

    @Override
    public int headerLength() {
        return 8;
    }

    @Override
    public ManagedBuffer body() {
        return null;
    }

    @Override
    public void encodeHeader(ByteBuf out) {
        out.writeLong(streamId);
    }

    static StreamClose decode(ByteBuf in) {
        Codec.need(in, 8, MessageType.STREAM_CLOSE);
        return new StreamClose(in.readLong());
    }
}
