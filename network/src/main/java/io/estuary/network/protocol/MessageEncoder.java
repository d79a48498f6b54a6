package io.estuary.network.protocol;

import io.estuary.network.buffer.ManagedBuffer;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageEncoder;
import io.netty.handler.ssl.SslHandler;
import java.util.List;

/**
 * Writes the length, type and header into a small buffer and passes the body on untouched (a ByteBuf, or a
 * FileRegion that Netty sends with sendfile; on a TLS channel the file's bytes in a pooled buffer).
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
                // TLS encrypts in memory, so it cannot send a file region: read file segments into pooled buffers.
                boolean tls = ctx.pipeline().get(SslHandler.class) != null;
                out.add(tls ? body.convertToNettyBytes(ctx.alloc()) : body.convertToNetty());
            } finally {
                msg.releaseBody(); // convertToNetty gave Netty its own reference
            }
        }
    }
}
