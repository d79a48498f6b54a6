package io.estuary.master.state.raft;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.io.netty.buffer.ByteBuf;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelFutureListener;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelHandlerContext;
import org.apache.ratis.thirdparty.io.netty.handler.codec.ByteToMessageDecoder;
import org.apache.ratis.thirdparty.io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server side of {@link RaftHandshake}, first in a Raft port's pipeline: no byte reaches Ratis until the peer
 * proved it holds the cluster secret, then this handler leaves the pipeline (bytes already read after the proof go
 * on to the frame decoder). A peer that sends anything else, a wrong proof, or not all of it within the timeout is
 * counted and logged by {@link RaftAuthFailures}, answered {@code REFUSED} where it got that far, and closed.
 *
 * <p>In the permissive mode (a rolling upgrade from masters without authentication), a peer whose first bytes are
 * not the handshake's magic is taken for a master speaking Ratis at once: it is admitted, counted and logged, and
 * its bytes go on to the frame decoder. No Ratis frame can start with the magic (its fourth byte would open a
 * protobuf field of wire type 6, which does not exist). A peer that starts the handshake must finish it, in both
 * modes. One instance per channel, confined to its event loop.
 */
final class RaftHandshakeServer extends ByteToMessageDecoder {
    private static final Logger LOG = LoggerFactory.getLogger(RaftHandshakeServer.class);

    private enum State {
        HELLO,
        PROOF,
        DONE
    }

    private final byte[] secret;
    private final RaftAuthFailures failures;
    private final long timeoutMs;
    private final boolean permissive;
    private State state = State.HELLO;
    private byte[] expectedProof;
    private ScheduledFuture<?> deadline;
    private boolean receivedAny;

    RaftHandshakeServer(byte[] secret, RaftAuthFailures failures, long timeoutMs, boolean permissive) {
        this.secret = secret;
        this.failures = failures;
        this.timeoutMs = timeoutMs;
        this.permissive = permissive;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        deadline = ctx.executor()
                .schedule(
                        () -> {
                            if (state != State.DONE) {
                                refuse(ctx, "no complete handshake within " + timeoutMs + " ms", false);
                            }
                        },
                        timeoutMs,
                        TimeUnit.MILLISECONDS);
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        if (deadline != null) deadline.cancel(false);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        receivedAny = true;
        switch (state) {
            case HELLO:
                if (in.readableBytes() < Integer.BYTES) return;
                if (in.getInt(in.readerIndex()) != RaftHandshake.MAGIC) {
                    if (RaftHandshake.looksLikeTls(in)) {
                        // Never admitted, not even in the permissive mode: Ratis would take it for garbage.
                        refuse(
                                ctx,
                                "it opened with TLS, and this Raft port has none: a master with "
                                        + "estuary.tls.internal.enabled=true; set it the same on every master",
                                false);
                        return;
                    }
                    // A master without authentication speaks Ratis at once; anything else is garbage.
                    if (permissive) {
                        admitUnauthenticated(ctx);
                        return;
                    }
                    refuse(
                            ctx,
                            "it did not open with the Raft authentication handshake (a master with "
                                    + "estuary.auth.enabled=false, or not a master at all)",
                            false);
                    return;
                }
                if (in.readableBytes() < RaftHandshake.HELLO_BYTES) return;
                in.skipBytes(Integer.BYTES);
                byte version = in.readByte();
                if (version != RaftHandshake.VERSION) {
                    refuse(
                            ctx,
                            "it speaks version " + version + " of the Raft authentication handshake, this master "
                                    + RaftHandshake.VERSION,
                            false);
                    return;
                }
                byte[] clientNonce = new byte[RaftHandshake.NONCE_BYTES];
                in.readBytes(clientNonce);
                byte[] serverNonce = RaftHandshake.nonce();
                expectedProof = RaftHandshake.clientProof(secret, clientNonce, serverNonce);
                ByteBuf challenge = ctx.alloc().buffer(RaftHandshake.CHALLENGE_BYTES);
                challenge.writeBytes(serverNonce);
                challenge.writeBytes(RaftHandshake.serverProof(secret, clientNonce, serverNonce));
                ctx.writeAndFlush(challenge);
                state = State.PROOF;
                return;
            case PROOF:
                if (in.readableBytes() < RaftHandshake.PROOF_BYTES) return;
                byte[] proof = new byte[RaftHandshake.PROOF_BYTES];
                in.readBytes(proof);
                if (!RaftHandshake.matches(expectedProof, proof)) {
                    refuse(ctx, "wrong proof: it does not hold this cluster's secret", true);
                    return;
                }
                state = State.DONE;
                ByteBuf admitted = ctx.alloc().buffer(1);
                admitted.writeByte(RaftHandshake.ADMITTED);
                ctx.writeAndFlush(admitted);
                ctx.pipeline().remove(this);
                return;
            default:
                in.skipBytes(in.readableBytes()); // refused: the channel is closing
        }
    }

    /** Permissive mode: the peer's bytes, unread, go on to Ratis' frame decoder. */
    private void admitUnauthenticated(ChannelHandlerContext ctx) {
        state = State.DONE;
        failures.admittedUnauthenticated(ctx.channel().remoteAddress());
        ctx.pipeline().remove(this);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (state != State.DONE) {
            boolean silent = state == State.HELLO && !receivedAny;
            state = State.DONE;
            if (silent) {
                // Connected and left without a byte: a probe, or a master that stopped; nothing was attempted.
                LOG.debug(
                        "A connection to the Raft port from {} closed before it sent anything",
                        ctx.channel().remoteAddress());
            } else {
                failures.refused(ctx.channel().remoteAddress(), "the connection closed before the handshake finished");
            }
        }
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        for (Throwable c = cause; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof org.apache.ratis.thirdparty.io.netty.handler.ssl.NotSslRecordException) {
                refuse(
                        ctx,
                        "it sent plain bytes on this TLS Raft port: a master with "
                                + "estuary.tls.internal.enabled=false; set it the same on every master",
                        false);
                return;
            }
        }
        refuse(ctx, "the handshake failed: " + cause, false);
    }

    private void refuse(ChannelHandlerContext ctx, String why, boolean answer) {
        if (state == State.DONE) return;
        state = State.DONE;
        failures.refused(ctx.channel().remoteAddress(), why);
        if (answer) {
            ByteBuf refused = ctx.alloc().buffer(1);
            refused.writeByte(RaftHandshake.REFUSED);
            ctx.writeAndFlush(refused).addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.close();
        }
    }
}
