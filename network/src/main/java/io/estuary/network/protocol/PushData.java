package io.estuary.network.protocol;

import io.estuary.network.buffer.ManagedBuffer;
import io.netty.buffer.ByteBuf;

/**
 * Batches of one partition pushed by a map task. Body: one or more complete batches, appended by the worker as
 * they are. Answered with an empty {@link RpcResponse} once the worker has taken them.
 */
public final class PushData extends AbstractMessage {
  public final long requestId;
  public final String shuffleKey;
  public final int partitionId;
  public final int epoch;

  public PushData(long requestId, String shuffleKey, int partitionId, int epoch, ManagedBuffer body) {
    super(body);
    this.requestId = requestId;
    this.shuffleKey = shuffleKey;
    this.partitionId = partitionId;
    this.epoch = epoch;
  }

  @Override public MessageType type() { return MessageType.PUSH_DATA; }
  @Override public int headerLength() { return 8 + Codec.stringLength(shuffleKey) + 8; }

  @Override
  public void encodeHeader(ByteBuf out) {
    out.writeLong(requestId);
    Codec.writeString(out, shuffleKey);
    out.writeInt(partitionId);
    out.writeInt(epoch);
  }

  static PushData decode(ByteBuf in, ManagedBufferFactory bodies, int maxKeyBytes) {
    MessageType t = MessageType.PUSH_DATA;
    Codec.need(in, 8, t);
    long id = in.readLong();
    String key = Codec.readString(in, t, maxKeyBytes);
    Codec.need(in, 8, t);
    int partition = in.readInt();
    int epoch = in.readInt();
    return new PushData(id, key, partition, epoch, bodies.rest(in));
  }
}
