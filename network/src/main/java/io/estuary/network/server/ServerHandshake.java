package io.estuary.network.server;

import io.estuary.network.protocol.Handshake;
import io.estuary.network.protocol.ProtocolRange;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's side of the {@link Handshake}: reads the client's hello, answers with the version the connection
 * uses ({@link Handshake#answer}), records it on the channel ({@link Handshake#AGREED_VERSION}), and either removes itself (frames follow) or closes the connection. Bytes that arrive after the
 * hello in the same read pass on to the frame decoder. Something that is not a hello (no magic: a client of a release
 * before the handshake, or not Estuary at all) is closed without an answer, since it would misread one. Confined to
 * the channel's event loop.
 */
final class ServerHandshake extends ByteToMessageDecoder {
    private static final Logger LOG = LoggerFactory.getLogger(ServerHandshake.class);

    private final String serverName;
    private final ProtocolRange speaks;

    ServerHandshake(String serverName, ProtocolRange speaks) {
        this.serverName = serverName;
        this.speaks = speaks;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (in.readableBytes() < Handshake.HELLO_SIZE) return;
        int magic = in.readInt();
        int clientVersion = in.readInt();
        if (magic != Handshake.MAGIC && Handshake.isTlsRecord(in.getUnsignedByte(in.readerIndex() - 8))) {
            LOG.warn(
                    "{}: {} is a TLS client on this plain port: set estuary.tls.<group>.enabled=false on the client "
                            + "or enable TLS here; closing the connection",
                    serverName,
                    ctx.channel().remoteAddress());
            in.skipBytes(in.readableBytes());
            // Plain bytes back: the client's TLS layer then reports at once that this port is not TLS.
            ByteBuf refusal = ctx.alloc().buffer(Handshake.ANSWER_SIZE);
            Handshake.writeAnswer(refusal, new Handshake.Answer(speaks.newest(), Handshake.REFUSED));
            ctx.writeAndFlush(refusal).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        if (magic != Handshake.MAGIC) {
            LOG.warn(
                    "{}: {} sent no Estuary handshake (a client older than protocol 4, or not an Estuary client); "
                            + "closing the connection",
                    serverName,
                    ctx.channel().remoteAddress());
            in.skipBytes(in.readableBytes());
            ctx.close();
            return;
        }
        Handshake.Answer answer = Handshake.answer(speaks, clientVersion);
        ByteBuf bytes = ctx.alloc().buffer(Handshake.ANSWER_SIZE);
        Handshake.writeAnswer(bytes, answer);
        if (answer.accepted()) {
            ctx.channel().attr(Handshake.AGREED_VERSION).set(answer.version);
            ctx.writeAndFlush(bytes);
            ctx.pipeline().remove(this); // what follows the hello goes to the frame decoder
        } else {
            LOG.warn(
                    "{}: refused {}: {}",
                    serverName,
                    ctx.channel().remoteAddress(),
                    Handshake.mismatch(ProtocolRange.only(clientVersion), "this server", speaks.toString()));
            in.skipBytes(in.readableBytes());
            ctx.writeAndFlush(bytes).addListener(ChannelFutureListener.CLOSE);
        }
    }
}
