package io.estuary.network.protocol;

import io.estuary.network.buffer.ManagedBuffer;
import io.netty.buffer.ByteBuf;

/** A chunk that could not be served, with the reason. */
public final class ChunkFetchFailure implements Message {
  public final long streamId;
  public final int chunkIndex;
  public final String error;

  public ChunkFetchFailure(long streamId, int chunkIndex, String error) {
    this.streamId = streamId;
    this.chunkIndex = chunkIndex;
    this.error = error;
  }

  @Override public MessageType type() { return MessageType.CHUNK_FETCH_FAILURE; }
  @Override public int headerLength() { return 12 + Codec.stringLength(error); }
  @Override public ManagedBuffer body() { return null; }

  @Override
  public void encodeHeader(ByteBuf out) {
    out.writeLong(streamId);
    out.writeInt(chunkIndex);
    Codec.writeString(out, error);
  }

  static ChunkFetchFailure decode(ByteBuf in) {
    MessageType t = MessageType.CHUNK_FETCH_FAILURE;
    Codec.need(in, 12, t);
    long stream = in.readLong();
    int chunk = in.readInt();
    return new ChunkFetchFailure(stream, chunk, Codec.readString(in, t));
  }
}
