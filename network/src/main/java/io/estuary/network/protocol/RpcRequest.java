package io.estuary.network.protocol;

import io.estuary.network.buffer.ManagedBuffer;
import io.netty.buffer.ByteBuf;

/** A request that expects one {@link RpcResponse} or {@link RpcFailure} with the same id. Body: the request. */
public final class RpcRequest extends AbstractMessage {
    public final long requestId;

    public RpcRequest(long requestId, ManagedBuffer body) {
        super(body);
        this.requestId = requestId;
    }

    @Override
    public MessageType type() {
        return MessageType.RPC_REQUEST;
    }

    @Override
    public int headerLength() {
        return 8;
    }

    @Override
    public void encodeHeader(ByteBuf out) {
        out.writeLong(requestId);
    }

    static RpcRequest decode(ByteBuf in, ManagedBufferFactory bodies) {
        Codec.need(in, 8, MessageType.RPC_REQUEST);
        return new RpcRequest(in.readLong(), bodies.rest(in));
    }
}
