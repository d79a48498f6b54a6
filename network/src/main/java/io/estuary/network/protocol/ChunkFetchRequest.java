package io.estuary.network.protocol;

import io.estuary.network.buffer.ManagedBuffer;
import io.netty.buffer.ByteBuf;

/** Asks for one chunk of an opened stream. */
public final class ChunkFetchRequest implements Message {
    public final long streamId;
    public final int chunkIndex;

    public ChunkFetchRequest(long streamId, int chunkIndex) {
        this.streamId = streamId;
        this.chunkIndex = chunkIndex;
    }

    @Override
    public MessageType type() {
        return MessageType.CHUNK_FETCH_REQUEST;
    }

    @Override
    public int headerLength() {
        return 12;
    }

    @Override
    public ManagedBuffer body() {
        return null;
    }

    @Override
    public void encodeHeader(ByteBuf out) {
        out.writeLong(streamId);
        out.writeInt(chunkIndex);
    }

    static ChunkFetchRequest decode(ByteBuf in) {
        Codec.need(in, 12, MessageType.CHUNK_FETCH_REQUEST);
        return new ChunkFetchRequest(in.readLong(), in.readInt());
    }
}
