package io.estuary.network.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
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
 * <p>Optionally reports, after every read, how many received bytes it holds that are not yet a whole frame (the
 * receive buffers a server holds for this connection) and how many frames the read completed, so a server can count
 * the bytes against its memory bound and finish reading a frame already started while it holds other connections
 * back; everything is given back when the connection goes. The largest frame accepted can carry its own
 * configuration key, named in the refusal. Confined to the channel's event loop, as every Netty handler.
 */
public final class FrameDecoder extends ByteToMessageDecoder {
    public static final int LENGTH_FIELD = 4;

    /** Told what a connection holds short of a whole frame; called on the connection's event loop, must be quick. */
    public interface Progress {
        /**
         * After each read: {@code heldChange} is the change in the bytes held short of a whole frame (0 when none),
         * {@code held} what is held now, {@code framesCompleted} how many whole frames the read completed. Also called
         * once with everything given back when the connection goes.
         */
        void received(long heldChange, long held, int framesCompleted);
    }

    private final long maxFrameSize;
    private final String maxFrameKey;
    private final int maxHeaderString;
    private final Progress progress;
    private long heldReported;
    private boolean failed;
    /** Bytes that reached this decoder, and the frames it made of them, since the connection opened. */
    private long bytesReceived;

    private long framesDecoded;

    /** A decoder for what servers send (their failure messages may be long). */
    public FrameDecoder(long maxFrameSize) {
        this(maxFrameSize, Integer.MAX_VALUE);
    }

    /** A decoder whose push headers carry at most {@code maxHeaderString} bytes of shuffle key. */
    public FrameDecoder(long maxFrameSize, int maxHeaderString) {
        this(maxFrameSize, maxHeaderString, (java.util.function.LongConsumer) null);
    }

    /** As above, telling {@code heldChanges} (may be null) each change in the bytes held short of a whole frame. */
    public FrameDecoder(long maxFrameSize, int maxHeaderString, java.util.function.LongConsumer heldChanges) {
        this(
                maxFrameSize,
                "estuary.network.maxFrameSize",
                maxHeaderString,
                heldChanges == null
                        ? null
                        : (change, held, frames) -> {
                            if (change != 0) heldChanges.accept(change);
                        });
    }

    /**
     * A decoder refusing frames over {@code maxFrameSize} with a message naming {@code maxFrameKey}, telling
     * {@code progress} (may be null) after every read.
     */
    public FrameDecoder(long maxFrameSize, String maxFrameKey, int maxHeaderString, Progress progress) {
        this.maxFrameSize = maxFrameSize;
        this.maxFrameKey = maxFrameKey;
        this.maxHeaderString = maxHeaderString;
        this.progress = progress;
        setCumulator(COMPOSITE_CUMULATOR);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (msg instanceof ByteBuf) bytesReceived += ((ByteBuf) msg).readableBytes();
        super.channelRead(ctx, msg);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        int before = out.size();
        try {
            decodeFrames(in, out);
        } finally {
            framesDecoded += out.size() - before;
            report(in.readableBytes(), out.size() - before);
        }
    }

    /**
     * For a server's log about a connection that stopped making progress: the bytes and frames this decoder saw, and
     * what it holds short of a whole frame (the frame's declared length and type, and its first bytes in hex), so that
     * a peer that stopped mid-frame can be told from a stream that lost its framing. Call on the event loop.
     */
    public String describe() {
        StringBuilder s = new StringBuilder()
                .append(bytesReceived)
                .append(" bytes received, ")
                .append(framesDecoded)
                .append(" frames decoded");
        ByteBuf held = internalBuffer();
        int n = held.readableBytes();
        if (n == 0) return s.append(", nothing held").toString();
        s.append(", ").append(n).append(" bytes held");
        if (n >= LENGTH_FIELD) s.append(" of a frame declaring ").append(held.getUnsignedInt(held.readerIndex()));
        if (n > LENGTH_FIELD) {
            byte t = held.getByte(held.readerIndex() + LENGTH_FIELD);
            MessageType type = MessageType.fromId(t);
            s.append(" (")
                    .append(type == null ? String.format("type 0x%02x", t & 0xff) : type.toString())
                    .append(')');
        }
        return s.append(", starting ")
                .append(ByteBufUtil.hexDump(held, held.readerIndex(), Math.min(n, 64)))
                .toString();
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        report(0, 0); // the connection is gone and its buffers with it
    }

    private void report(long held, int frames) {
        if (progress == null || (held == heldReported && frames == 0)) return;
        long change = held - heldReported;
        heldReported = held;
        progress.received(change, held, frames);
    }

    private void decodeFrames(ByteBuf in, List<Object> out) {
        if (failed) {
            in.skipBytes(in.readableBytes()); // the connection is being closed; ignore whatever else arrives
            return;
        }
        while (in.readableBytes() >= LENGTH_FIELD) {
            long frameLength = in.getUnsignedInt(in.readerIndex());
            if (frameLength > maxFrameSize) {
                throw fail("frame of " + frameLength + " bytes exceeds " + maxFrameKey + " (" + maxFrameSize + ")");
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
            case RPC_REQUEST:
                return RpcRequest.decode(in, bodies);
            case RPC_RESPONSE:
                return RpcResponse.decode(in, bodies);
            case RPC_FAILURE:
                return RpcFailure.decode(in);
            case ONE_WAY:
                return OneWayMessage.decode(in, bodies);
            case PUSH_DATA:
                return PushData.decode(in, bodies, maxHeaderString);
            case PUSH_MERGED_DATA:
                return PushMergedData.decode(in, bodies, maxHeaderString);
            case CHUNK_FETCH_REQUEST:
                return ChunkFetchRequest.decode(in);
            case CHUNK_FETCH_SUCCESS:
                return ChunkFetchSuccess.decode(in, bodies);
            case CHUNK_FETCH_FAILURE:
                return ChunkFetchFailure.decode(in);
            case STREAM_CLOSE:
                return StreamClose.decode(in);
            default:
                throw new ProtocolException("no decoder for " + type);
        }
    }
}
