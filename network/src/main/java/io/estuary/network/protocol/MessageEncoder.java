package io.estuary.network.protocol;

import io.estuary.network.buffer.ManagedBuffer;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageEncoder;
import java.util.List;

/**
 * Writes the length, type and header into a small buffer and passes the body on untouched (a ByteBuf, or a
 * FileRegion that Netty sends with sendfile).
 */
@ChannelHandler.Sharable
public final class MessageEncoder extends MessageToMessageEncoder<Message> {
    public static final MessageEncoder INSTANCE = new MessageEncoder();

    private MessageEncoder() {}

    @Override
    protected void encode(ChannelHandlerContext ctx, Message msg, List<Object> out) throws Exception {
        ManagedBuffer body = msg.body();
        long bodySize = body == null ? 0 : body.size();
        int headerLen = msg.headerLength();
        long frameLength = 1L + headerLen + bodySize;
        ByteBuf header = ctx.alloc().heapBuffer(FrameDecoder.LENGTH_FIELD + 1 + headerLen);
        header.writeInt((int) frameLength);
        header.writeByte(msg.type().id());
        msg.encodeHeader(header);
        out.add(header);
        if (body != null) {
            try {
                out.add(body.convertToNetty());
            } finally {
                msg.releaseBody(); // convertToNetty gave Netty its own reference
            }
        }
    }
}
