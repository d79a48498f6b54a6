package io.estuary.network.protocol;

import io.estuary.network.buffer.ManagedBuffer;
import io.netty.buffer.ByteBuf;

/**
 * The failed answer to a request or a push, with the server's error message. Request id
 * {@link #CONNECTION_ERROR} reports a protocol error on the whole connection, just before the server closes it.
 */
public final class RpcFailure extends AbstractMessage {
  public static final long CONNECTION_ERROR = -1L;

  public final long requestId;
  public final String error;

  public RpcFailure(long requestId, String error) {
    super(null);
    this.requestId = requestId;
    this.error = error;
  }

  @Override public MessageType type() { return MessageType.RPC_FAILURE; }
  @Override public int headerLength() { return 8 + Codec.stringLength(error); }

  @Override
  public void encodeHeader(ByteBuf out) {
    out.writeLong(requestId);
    Codec.writeString(out, error);
  }

  static RpcFailure decode(ByteBuf in) {
    Codec.need(in, 8, MessageType.RPC_FAILURE);
    long id = in.readLong();
    return new RpcFailure(id, Codec.readString(in, MessageType.RPC_FAILURE));
  }
}
