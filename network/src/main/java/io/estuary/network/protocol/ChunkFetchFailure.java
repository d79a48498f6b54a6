package io.estuary.network.protocol;

import io.estuary.common.status.StatusCode;
import io.estuary.network.buffer.ManagedBuffer;
import io.netty.buffer.ByteBuf;

/** A chunk that could not be served: a {@link StatusCode} and the reason. */
public final class ChunkFetchFailure implements Message {
    public final long streamId;
    public final int chunkIndex;
    public final StatusCode status;
    public final String error;

    public ChunkFetchFailure(long streamId, int chunkIndex, StatusCode status, String error) {
        this.streamId = streamId;
        this.chunkIndex = chunkIndex;
        this.status = status;
        this.error = error;
    }

    @Override
    public MessageType type() {
        return MessageType.CHUNK_FETCH_FAILURE;
    }

    @Override
    public int headerLength() {
        return 13 + Codec.stringLength(error);
    }

    @Override
    public ManagedBuffer body() {
        return null;
    }

    @Override
    public void encodeHeader(ByteBuf out) {
        out.writeLong(streamId);
        out.writeInt(chunkIndex);
        out.writeByte(status.id());
        Codec.writeString(out, error);
    }

    static ChunkFetchFailure decode(ByteBuf in) {
        MessageType t = MessageType.CHUNK_FETCH_FAILURE;
        Codec.need(in, 13, t);
        long stream = in.readLong();
        int chunk = in.readInt();
        StatusCode status = StatusCode.of(in.readByte());
        return new ChunkFetchFailure(stream, chunk, status, Codec.readString(in, t));
    }
}
