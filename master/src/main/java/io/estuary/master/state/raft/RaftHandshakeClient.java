package io.estuary.master.state.raft;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.ratis.thirdparty.io.netty.buffer.ByteBuf;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelHandlerContext;
import org.apache.ratis.thirdparty.io.netty.handler.codec.ByteToMessageDecoder;

/**
 * The client side of {@link RaftHandshake}, first in the pipeline of a connection to another master's Raft port. It
 * checks the server's proof first (a server without the cluster secret never sees one of ours), then proves itself;
 * {@code done} completes when the server admitted this connection and fails with an {@link IOException} naming the
 * peer otherwise. The caller sends nothing before {@code done} completes. One instance per channel, confined to its
 * event loop.
 */
final class RaftHandshakeClient extends ByteToMessageDecoder {
    private enum State {
        CHALLENGE,
        RESULT,
        DONE
    }

    private final byte[] secret;
    private final String peer;
    private final CompletableFuture<Void> done;
    private final byte[] clientNonce = RaftHandshake.nonce();
    private State state = State.CHALLENGE;

    RaftHandshakeClient(byte[] secret, String peer, CompletableFuture<Void> done) {
        this.secret = secret;
        this.peer = peer;
        this.done = done;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        ByteBuf hello = ctx.alloc().buffer(RaftHandshake.HELLO_BYTES);
        hello.writeInt(RaftHandshake.MAGIC);
        hello.writeByte(RaftHandshake.VERSION);
        hello.writeBytes(clientNonce);
        ctx.writeAndFlush(hello);
        super.channelActive(ctx);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        switch (state) {
            case CHALLENGE:
                if (RaftHandshake.looksLikeTls(in)) {
                    fail(
                            ctx,
                            "the master at " + peer + " answered with TLS, and this master's Raft connections have "
                                    + "none: set estuary.tls.internal.enabled the same on every master");
                    return;
                }
                if (in.readableBytes() < RaftHandshake.CHALLENGE_BYTES) return;
                byte[] serverNonce = new byte[RaftHandshake.NONCE_BYTES];
                byte[] serverProof = new byte[RaftHandshake.PROOF_BYTES];
                in.readBytes(serverNonce);
                in.readBytes(serverProof);
                if (!RaftHandshake.matches(RaftHandshake.serverProof(secret, clientNonce, serverNonce), serverProof)) {
                    fail(ctx, "the master at " + peer + " does not know this cluster's secret (its proof is wrong)");
                    return;
                }
                ByteBuf proof = ctx.alloc().buffer(RaftHandshake.PROOF_BYTES);
                proof.writeBytes(RaftHandshake.clientProof(secret, clientNonce, serverNonce));
                ctx.writeAndFlush(proof);
                state = State.RESULT;
                return;
            case RESULT:
                if (in.readableBytes() < 1) return;
                byte result = in.readByte();
                if (result != RaftHandshake.ADMITTED) {
                    fail(ctx, "the master at " + peer + " refused this master's proof of the cluster secret");
                    return;
                }
                state = State.DONE;
                ctx.pipeline().remove(this);
                done.complete(null);
                return;
            default:
                in.skipBytes(in.readableBytes());
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (state != State.DONE) {
            state = State.DONE;
            done.completeExceptionally(new IOException("the master at " + peer
                    + " closed the connection during the Raft authentication handshake: it runs without "
                    + "authentication, or with TLS on its Raft port while this master has none "
                    + "(estuary.tls.internal.enabled), or refused this master (see its log)"));
        }
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        fail(ctx, "the Raft authentication handshake with " + peer + " failed: " + cause);
    }

    private void fail(ChannelHandlerContext ctx, String why) {
        if (state == State.DONE) return;
        state = State.DONE;
        done.completeExceptionally(new IOException(why));
        ctx.close();
    }
}
