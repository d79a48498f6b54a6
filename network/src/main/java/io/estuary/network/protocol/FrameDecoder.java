package io.estuary.network.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;

/**
 * The one decoder: splits the byte stream into frames and frames into messages. Bytes are gathered in a composite
 * buffer and frame bodies are slices of it, so pushed data reaches the handler without a copy.
 *
 * <p>A frame longer than the configured maximum, an unknown type byte, a truncated header or a push header whose
 * shuffle key is longer than the configured maximum string raises a {@link ProtocolException}; the channel handler
 * then reports it to the peer and closes the connection.
 *
 * <p>Optionally reports how many received bytes it holds that are not yet a whole frame (the receive buffers a
 * server holds for this connection), as changes, so a server can count them against its memory bound; everything
 * is given back when the connection goes. Confined to the channel's event loop, as every Netty handler.
 */
public final class FrameDecoder extends ByteToMessageDecoder {
  public static final int LENGTH_FIELD = 4;

  private final long maxFrameSize;
  private final int maxHeaderString;
  private final java.util.function.LongConsumer heldChanges;
  private long heldReported;
  private boolean failed;

  /** A decoder for what servers send (their failure messages may be long). */
  public FrameDecoder(long maxFrameSize) {
    this(maxFrameSize, Integer.MAX_VALUE);
  }

  /** A decoder whose push headers carry at most {@code maxHeaderString} bytes of shuffle key. */
  public FrameDecoder(long maxFrameSize, int maxHeaderString) {
    this(maxFrameSize, maxHeaderString, null);
  }

  /** As above, telling {@code heldChanges} (may be null) each change in the bytes held short of a whole frame. */
  public FrameDecoder(long maxFrameSize, int maxHeaderString, java.util.function.LongConsumer heldChanges) {
    this.maxFrameSize = maxFrameSize;
    this.maxHeaderString = maxHeaderString;
    this.heldChanges = heldChanges;
    setCumulator(COMPOSITE_CUMULATOR);
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    try {
      decodeFrames(in, out);
    } finally {
      reportHeld(in.readableBytes());
    }
  }

  @Override
  protected void handlerRemoved0(ChannelHandlerContext ctx) {
    reportHeld(0); // the connection is gone and its buffers with it
  }

  private void reportHeld(long held) {
    if (heldChanges == null || held == heldReported) return;
    long change = held - heldReported;
    heldReported = held;
    heldChanges.accept(change);
  }

  private void decodeFrames(ByteBuf in, List<Object> out) {
    if (failed) {
      in.skipBytes(in.readableBytes()); // the connection is being closed; ignore whatever else arrives
      return;
    }
    while (in.readableBytes() >= LENGTH_FIELD) {
      long frameLength = in.getUnsignedInt(in.readerIndex());
      if (frameLength > maxFrameSize) {
        throw fail("frame of " + frameLength + " bytes exceeds estuary.network.maxFrameSize (" + maxFrameSize + ")");
      }
      if (frameLength < 1) {
        throw fail("frame of length 0 has no type byte");
      }
      if (in.readableBytes() < LENGTH_FIELD + frameLength) {
        return; // wait for the rest of the frame
      }
      in.skipBytes(LENGTH_FIELD);
      byte typeId = in.readByte();
      MessageType type = MessageType.fromId(typeId);
      if (type == null) {
        throw fail(String.format("unknown message type 0x%02x", typeId & 0xff));
      }
      ByteBuf frame = in.readSlice((int) frameLength - 1);
      try {
        out.add(decode(type, frame, maxHeaderString));
      } catch (ProtocolException e) {
        failed = true;
        throw e;
      }
    }
  }

  private ProtocolException fail(String message) {
    failed = true;
    return new ProtocolException(message);
  }

  static Message decode(MessageType type, ByteBuf in, int maxHeaderString) {
    ManagedBufferFactory bodies = ManagedBufferFactory.INSTANCE;
    switch (type) {
      case RPC_REQUEST: return RpcRequest.decode(in, bodies);
      case RPC_RESPONSE: return RpcResponse.decode(in, bodies);
      case RPC_FAILURE: return RpcFailure.decode(in);
      case ONE_WAY: return OneWayMessage.decode(in, bodies);
      case PUSH_DATA: return PushData.decode(in, bodies, maxHeaderString);
      case PUSH_MERGED_DATA: return PushMergedData.decode(in, bodies, maxHeaderString);
      case CHUNK_FETCH_REQUEST: return ChunkFetchRequest.decode(in);
      case CHUNK_FETCH_SUCCESS: return ChunkFetchSuccess.decode(in, bodies);
      case CHUNK_FETCH_FAILURE: return ChunkFetchFailure.decode(in);
      case STREAM_CLOSE: return StreamClose.decode(in);
      default: throw new ProtocolException("no decoder for " + type);
    }
  }
}
