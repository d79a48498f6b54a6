package io.estuary.network.protocol;

import io.estuary.network.buffer.ManagedBuffer;
import io.netty.buffer.ByteBuf;

/**
 * Batches of several partitions on one worker, sent in one frame. {@code offsets[i]} is where partition i's bytes
 * start in the body; they run to the next offset (or the end). Saves one round trip per partition when a map
 * task ends with many small buffers.
 */
public final class PushMergedData extends AbstractMessage {
  public final long requestId;
  public final String shuffleKey;
  public final int[] partitionIds;
  public final int[] epochs;
  public final int[] offsets;

  public PushMergedData(long requestId, String shuffleKey, int[] partitionIds, int[] epochs, int[] offsets,
      ManagedBuffer body) {
    super(body);
    if (partitionIds.length != epochs.length || partitionIds.length != offsets.length) {
      throw new IllegalArgumentException("partitionIds, epochs and offsets differ in length");
    }
    this.requestId = requestId;
    this.shuffleKey = shuffleKey;
    this.partitionIds = partitionIds;
    this.epochs = epochs;
    this.offsets = offsets;
  }

  @Override public MessageType type() { return MessageType.PUSH_MERGED_DATA; }

  @Override
  public int headerLength() {
    return 8 + Codec.stringLength(shuffleKey) + 4 + 12 * partitionIds.length;
  }

  @Override
  public void encodeHeader(ByteBuf out) {
    out.writeLong(requestId);
    Codec.writeString(out, shuffleKey);
    out.writeInt(partitionIds.length);
    for (int i = 0; i < partitionIds.length; i++) {
      out.writeInt(partitionIds[i]);
      out.writeInt(epochs[i]);
      out.writeInt(offsets[i]);
    }
  }

  static PushMergedData decode(ByteBuf in, ManagedBufferFactory bodies, int maxKeyBytes) {
    MessageType t = MessageType.PUSH_MERGED_DATA;
    Codec.need(in, 8, t);
    long id = in.readLong();
    String key = Codec.readString(in, t, maxKeyBytes);
    Codec.need(in, 4, t);
    int n = in.readInt();
    if (n <= 0 || (long) n * 12 > in.readableBytes()) {
      throw new ProtocolException("malformed " + t + " frame: " + n + " partitions do not fit in the "
          + in.readableBytes() + " bytes left");
    }
    int[] ids = new int[n];
    int[] epochs = new int[n];
    int[] offsets = new int[n];
    for (int i = 0; i < n; i++) {
      ids[i] = in.readInt();
      epochs[i] = in.readInt();
      offsets[i] = in.readInt();
    }
    int bodyLen = in.readableBytes();
    for (int i = 0; i < n; i++) {
      int end = i + 1 < n ? offsets[i + 1] : bodyLen;
      if (offsets[i] < 0 || offsets[i] > end || end > bodyLen) {
        throw new ProtocolException("malformed " + t + " frame: offsets " + java.util.Arrays.toString(offsets)
            + " do not fit a body of " + bodyLen + " bytes");
      }
    }
    return new PushMergedData(id, key, ids, epochs, offsets, bodies.rest(in));
  }
}
