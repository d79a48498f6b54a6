package io.estuary.network.client;

import io.estuary.common.status.StatusCode;
import io.estuary.network.protocol.Handshake;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.concurrent.Promise;
import java.util.List;

/**
 * The client's side of the {@link Handshake}: sends the hello when the connection opens and completes
 * {@link #done()} when the server's answer arrives: successfully (and this handler leaves the pipeline) if the
 * server accepted, else with a {@code VERSION_MISMATCH} {@link RemoteException} naming both versions (or
 * {@code CONNECTION_FAILED} if the connection closes first). Confined to the channel's event loop.
 */
final class ClientHandshake extends ByteToMessageDecoder {
    private final String remote;
    private final int version;
    private Promise<Void> done;

    ClientHandshake(String remote, int version) {
        this.remote = remote;
        this.version = version;
    }

    /** Completes once the server has answered; set when the handler is added. */
    Promise<Void> done() {
        return done;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        done = ctx.executor().newPromise();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        ByteBuf hello = ctx.alloc().buffer(Handshake.HELLO_SIZE);
        Handshake.writeHello(hello, version);
        ctx.writeAndFlush(hello);
        super.channelActive(ctx);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (in.readableBytes() < Handshake.ANSWER_SIZE) return;
        int magic = in.readInt();
        int serverVersion = in.readInt();
        boolean accepted = in.readByte() == 1;
        if (magic == Handshake.MAGIC && accepted) {
            ctx.pipeline().remove(this);
            done.trySuccess(null);
            return;
        }
        in.skipBytes(in.readableBytes());
        String why = magic != Handshake.MAGIC
                ? remote + " answered without the handshake: an Estuary server older than protocol 4, or not Estuary"
                : Handshake.mismatch(version, "the server at " + remote, serverVersion);
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
