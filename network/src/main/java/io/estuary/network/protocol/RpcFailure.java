package io.estuary.network.protocol;

import io.estuary.common.status.StatusCode;
import io.netty.buffer.ByteBuf;

/**
 * The failed answer to a request or a push: a {@link StatusCode} (what the client does next) and the server's
 * message (for people). Request id {@link #CONNECTION_ERROR} reports a protocol error on the whole connection,
 * just before the server closes it.
 */
public final class RpcFailure extends AbstractMessage {
    public static final long CONNECTION_ERROR = -1L;

    public final long requestId;
    public final StatusCode status;
    public final String error;

    public RpcFailure(long requestId, StatusCode status, String error) {
        super(null);
        this.requestId = requestId;
        this.status = status;
        this.error = error;
    }

    @Override
    public MessageType type() {
        return MessageType.RPC_FAILURE;
    }

    @Override
    public int headerLength() {
        return 9 + Codec.stringLength(error);
    }

    @Override
    public void encodeHeader(ByteBuf out) {
        out.writeLong(requestId);
        out.writeByte(status.id());
        Codec.writeString(out, error);
    }

    static RpcFailure decode(ByteBuf in) {
        Codec.need(in, 9, MessageType.RPC_FAILURE);
        long id = in.readLong();
        StatusCode status = StatusCode.of(in.readByte());
        return new RpcFailure(id, status, Codec.readString(in, MessageType.RPC_FAILURE));
    }
}
