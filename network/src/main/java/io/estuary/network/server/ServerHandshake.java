package io.estuary.network.server;

import io.estuary.network.auth.ServerAuth;
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

    private final ServerAuth auth;
    private final TransportObserver observer;

    ServerHandshake(String serverName, ProtocolRange speaks) {
        this(serverName, speaks, ServerAuth.off(), TransportObserver.NONE);
    }

    ServerHandshake(String serverName, ProtocolRange speaks, ServerAuth auth, TransportObserver observer) {
        this.serverName = serverName;
        this.speaks = speaks;
        this.auth = auth;
        this.observer = observer;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (in.readableBytes() < Handshake.HELLO_SIZE) return;
        int magic = in.readInt();
        int clientVersion = in.readInt();
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
