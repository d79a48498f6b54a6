package io.estuary.network.protocol;

import io.estuary.network.buffer.ManagedBuffer;
import io.netty.buffer.ByteBuf;

/** One chunk. Body: the chunk's bytes, sent from the file with zero-copy. */
public final class ChunkFetchSuccess extends AbstractMessage {
    public final long streamId;
    public final int chunkIndex;

    public ChunkFetchSuccess(long streamId, int chunkIndex, ManagedBuffer body) {
        super(body);
        this.streamId = streamId;
        this.chunkIndex = chunkIndex;
    }

    @Override
    public MessageType type() {
        return MessageType.CHUNK_FETCH_SUCCESS;
    }

    @Override
    public int headerLength() {
        return 12;
    }

    @Override
    public void encodeHeader(ByteBuf out) {
        out.writeLong(streamId);
        out.writeInt(chunkIndex);
    }

    static ChunkFetchSuccess decode(ByteBuf in, ManagedBufferFactory bodies) {
        Codec.need(in, 12, MessageType.CHUNK_FETCH_SUCCESS);
        return new ChunkFetchSuccess(in.readLong(), in.readInt(), bodies.rest(in));
    }
}
