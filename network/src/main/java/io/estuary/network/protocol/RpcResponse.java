package io.estuary.network.protocol;

import io.estuary.network.buffer.ManagedBuffer;
import io.netty.buffer.ByteBuf;

/** The successful answer to a request or a push. Body: the response (may be empty). */
public final class RpcResponse extends AbstractMessage {
    public final long requestId;

    public RpcResponse(long requestId, ManagedBuffer body) {
        super(body);
        this.requestId = requestId;
    }

    @Override
    public MessageType type() {
        return MessageType.RPC_RESPONSE;
    }

    @Override
    public int headerLength() {
        return 8;
    }

    @Override
    public void encodeHeader(ByteBuf out) {
        out.writeLong(requestId);
    }

    static RpcResponse decode(ByteBuf in, ManagedBufferFactory bodies) {
        Codec.need(in, 8, MessageType.RPC_RESPONSE);
        return new RpcResponse(in.readLong(), bodies.rest(in));
    }
}
