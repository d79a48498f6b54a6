package io.estuary.network.client;

import io.estuary.common.status.StatusCode;
import io.estuary.network.protocol.Handshake;
import io.estuary.network.protocol.ProtocolRange;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.concurrent.Promise;
import java.util.List;

/**
 * The client's side of the {@link Handshake}: sends the hello ({@code helloVersion}) when the connection opens and
 * completes {@link #done()} with the agreed version when the server's answer arrives: successfully (and this
 * handler leaves the pipeline) if the server accepted a version this client speaks, else with a
 * {@code VERSION_MISMATCH} {@link RemoteException} naming both versions (or {@code CONNECTION_FAILED} if the
 * connection closes first). After a refusal {@link #retryVersion()} says whether a new connection with another hello
 * may succeed (a server of release 0.1.0, which accepts only its own version). Confined to the channel's event loop.
 */
final class ClientHandshake extends ByteToMessageDecoder {
    private final String remote;
    private final ProtocolRange speaks;
    private final int helloVersion;
    private volatile int retryVersion = -1;
    private Promise<Integer> done;

    ClientHandshake(String remote, ProtocolRange speaks, int helloVersion) {
        this.remote = remote;
        this.speaks = speaks;
        this.helloVersion = helloVersion;
    }

    /** Completes with the agreed version once the server has answered; set when the handler is added. */
    Promise<Integer> done() {
        return done;
    }

    /** After a failed {@link #done()}: the hello version worth one more connection, or -1. */
    int retryVersion() {
        return retryVersion;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        done = ctx.executor().newPromise();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        ByteBuf hello = ctx.alloc().buffer(Handshake.HELLO_SIZE);
        Handshake.writeHello(hello, helloVersion);
        ctx.writeAndFlush(hello);
        super.channelActive(ctx);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (in.isReadable() && Handshake.isTlsRecord(in.getUnsignedByte(in.readerIndex()))) {
            in.skipBytes(in.readableBytes());
            done.tryFailure(new RemoteException(
                    StatusCode.VERSION_MISMATCH,
                    "the server at " + remote + " answered with TLS: its port has TLS on; set "
                            + "estuary.tls.<group>.enabled=true on this client (the group of that port)",
                    null));
            ctx.close();
            return;
        }
        if (in.readableBytes() < Handshake.ANSWER_SIZE) return;
        int magic = in.readInt();
        Handshake.Answer answer = new Handshake.Answer(in.readInt(), in.readByte());
        int agreed = magic == Handshake.MAGIC ? Handshake.agreedVersion(speaks, helloVersion, answer) : -1;
        if (agreed > 0) {
            ctx.pipeline().remove(this);
            done.trySuccess(agreed);
            return;
        }
        in.skipBytes(in.readableBytes());
        String why;
        if (magic != Handshake.MAGIC) {
            why = remote + " answered without the handshake: an Estuary server older than protocol 4, or not Estuary";
        } else {
            retryVersion = Handshake.retryVersion(speaks, helloVersion, answer);
            why = Handshake.mismatch(speaks, "the server at " + remote, "protocol " + answer.version);
        }
        done.tryFailure(new RemoteException(StatusCode.VERSION_MISMATCH, why, null));
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        done.tryFailure(RemoteException.noAnswer(
                remote + " closed the connection during the protocol handshake "
                        + "(a server older than protocol 4 closes it so)",
                null));
        super.channelInactive(ctx);
    }
}
