package io.estuary.network.tls;

import io.estuary.common.config.TlsConfig;
import io.estuary.network.protocol.Handshake;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * First on a TLS server connection, until the first bytes arrive: a client that opens with the plain Estuary hello
 * (TLS off on its side) gets a TLS alert back, which its handshake recognises and reports as "the server answered
 * with TLS", and a WARN here names the mismatch. Anything else passes to the TLS handler untouched, and this handler
 * leaves the pipeline. Confined to the channel's event loop.
 */
final class PlainClientDetector extends ByteToMessageDecoder {
    private static final Logger LOG = LoggerFactory.getLogger(PlainClientDetector.class);
    /** A TLS 1.2 record: fatal alert, handshake_failure. */
    private static final byte[] HANDSHAKE_FAILURE_ALERT = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28};

    private final String serverName;
    private final TlsConfig.Group group;

    PlainClientDetector(String serverName, TlsConfig.Group group) {
        this.serverName = serverName;
        this.group = group;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (in.readableBytes() < 4) return;
        if (in.getInt(in.readerIndex()) != Handshake.MAGIC) {
            ctx.pipeline().remove(this); // TLS (or garbage, which the TLS handler refuses): its bytes go on
            return;
        }
        LOG.warn(
                "{}: {} is a plain client on this TLS port: set {}=true on the client (or false here); closing the "
                        + "connection",
                serverName,
                ctx.channel().remoteAddress(),
                group.enabled.key());
        in.skipBytes(in.readableBytes());
        ctx.writeAndFlush(Unpooled.wrappedBuffer(HANDSHAKE_FAILURE_ALERT)).addListener(ChannelFutureListener.CLOSE);
    }
}
