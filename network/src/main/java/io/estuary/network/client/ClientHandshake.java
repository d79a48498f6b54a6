package io.estuary.network.client;

import io.estuary.common.status.StatusCode;
import io.estuary.network.auth.AuthExchange;
import io.estuary.network.auth.Credentials;
import io.estuary.network.protocol.Handshake;
import io.estuary.network.protocol.ProtocolRange;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.concurrent.Promise;
import java.util.Arrays;
import java.util.List;

/**
 * The client's side of the {@link Handshake} and, from protocol 6 on, of the {@link AuthExchange}: sends the hello
 * ({@code helloVersion}) when the connection opens; once the server accepted a version this client speaks, proves
 * its {@link Credentials} (anonymous for {@link Credentials#NONE}) and checks the server's proof of the same secret;
 * then completes {@link #done()} with the agreed version and leaves the pipeline. It fails {@link #done()} with a
 * {@code VERSION_MISMATCH} {@link RemoteException} naming both versions, with {@code UNAUTHENTICATED} (the server
 * refused the credentials, or could not prove it knows their secret: then this side closes), with the server's
 * status for any other refusal, or with {@code CONNECTION_FAILED} if the connection closes first. A protocol-5
 * server (release 0.1.0) authenticates nobody: the connection goes on without the exchange. After a version refusal
 * {@link #retryVersion()} says whether a new connection with another hello may succeed (a server of release 0.1.0,
 * which accepts only its own version). Confined to the channel's event loop.
 */
final class ClientHandshake extends ByteToMessageDecoder {
    private enum State {
        ANSWER,
        CHALLENGE,
        RESULT,
        FINISHED
    }

    private final String remote;
    private final ProtocolRange speaks;
    private final int helloVersion;
    private final Credentials credentials;
    private volatile int retryVersion = -1;
    private Promise<Integer> done;
    private State state = State.ANSWER;
    private int agreed;
    private byte[] clientNonce;

    ClientHandshake(String remote, ProtocolRange speaks, int helloVersion) {
        this(remote, speaks, helloVersion, Credentials.NONE);
    }

    ClientHandshake(String remote, ProtocolRange speaks, int helloVersion, Credentials credentials) {
        this.remote = remote;
        this.speaks = speaks;
        this.helloVersion = helloVersion;
        this.credentials = credentials;
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
        switch (state) {
            case ANSWER:
                readAnswer(ctx, in);
                break;
            case CHALLENGE:
                readChallenge(ctx, in);
                break;
            case RESULT:
                readResult(ctx, in);
                break;
            default:
                in.skipBytes(in.readableBytes());
        }
    }

    private void readAnswer(ChannelHandlerContext ctx, ByteBuf in) {
        if (in.readableBytes() < Handshake.ANSWER_SIZE) return;
        int magic = in.readInt();
        Handshake.Answer answer = new Handshake.Answer(in.readInt(), in.readByte());
        agreed = magic == Handshake.MAGIC ? Handshake.agreedVersion(speaks, helloVersion, answer) : -1;
        if (agreed > 0) {
            if (!AuthExchange.runsAt(agreed)) {
                succeed(ctx);
                return;
            }
            clientNonce = AuthExchange.nonce();
            ByteBuf hello = ctx.alloc().buffer();
            AuthExchange.writeHello(hello, identityName(), clientNonce);
            ctx.writeAndFlush(hello);
            state = State.CHALLENGE;
            return;
        }
        String why;
        if (magic != Handshake.MAGIC) {
            why = remote + " answered without the handshake: an Estuary server older than protocol 4, or not Estuary";
        } else {
            retryVersion = Handshake.retryVersion(speaks, helloVersion, answer);
            why = Handshake.mismatch(speaks, "the server at " + remote, "protocol " + answer.version);
        }
        fail(ctx, in, StatusCode.VERSION_MISMATCH, why);
    }

    private void readChallenge(ChannelHandlerContext ctx, ByteBuf in) {
        if (!in.isReadable()) return;
        byte outcome = in.getByte(in.readerIndex());
        if (outcome == AuthExchange.ADMITTED) {
            in.skipBytes(1);
            succeed(ctx);
        } else if (outcome == AuthExchange.PROVE) {
            if (in.readableBytes() < 1 + AuthExchange.NONCE_BYTES + AuthExchange.PROOF_BYTES) return;
            in.skipBytes(1);
            byte[] serverNonce = new byte[AuthExchange.NONCE_BYTES];
            byte[] serverProof = new byte[AuthExchange.PROOF_BYTES];
            in.readBytes(serverNonce).readBytes(serverProof);
            if (credentials.isNone()) {
                fail(
                        ctx,
                        in,
                        StatusCode.UNAUTHENTICATED,
                        "the server at " + remote
                                + " asks for a proof of identity, and this client has no credentials");
                return;
            }
            byte[] secret = credentials.secret();
            try {
                String name = identityName();
                if (!AuthExchange.matches(
                        AuthExchange.serverProof(secret, name, clientNonce, serverNonce), serverProof)) {
                    fail(
                            ctx,
                            in,
                            StatusCode.UNAUTHENTICATED,
                            "the server at " + remote
                                    + " does not know the secret of " + name + ": it is not a server of this cluster, "
                                    + "or its secret differs");
                    return;
                }
                ByteBuf proof = ctx.alloc().buffer(AuthExchange.PROOF_BYTES);
                proof.writeBytes(AuthExchange.clientProof(secret, name, clientNonce, serverNonce));
                ctx.writeAndFlush(proof);
                state = State.RESULT;
            } finally {
                Arrays.fill(secret, (byte) 0); // our own copy
            }
        } else {
            readRefusal(ctx, in);
        }
    }

    private void readResult(ChannelHandlerContext ctx, ByteBuf in) {
        AuthExchange.Status result = readStatus(ctx, in);
        if (result == null) return;
        if (result.code == StatusCode.OK) succeed(ctx);
        else refused(ctx, in, result);
    }

    private void readRefusal(ChannelHandlerContext ctx, ByteBuf in) {
        AuthExchange.Status refusal = readStatus(ctx, in);
        if (refusal != null) refused(ctx, in, refusal);
    }

    private void refused(ChannelHandlerContext ctx, ByteBuf in, AuthExchange.Status refusal) {
        fail(
                ctx,
                in,
                refusal.code,
                "the server at " + remote + " refused the connection as " + identityLabel() + ": " + refusal.message);
    }

    /** A status and message, or null when more bytes are needed (or it was malformed: then done has failed). */
    private AuthExchange.Status readStatus(ChannelHandlerContext ctx, ByteBuf in) {
        try {
            return AuthExchange.readStatus(in);
        } catch (IllegalArgumentException e) {
            fail(
                    ctx,
                    in,
                    StatusCode.BAD_REQUEST,
                    "the server at " + remote + " sent a malformed answer: " + e.getMessage());
            return null;
        }
    }

    private String identityName() {
        return credentials.isNone() ? "" : credentials.identity().name();
    }

    private String identityLabel() {
        return credentials.isNone() ? "anonymous" : credentials.identity().name();
    }

    private void succeed(ChannelHandlerContext ctx) {
        state = State.FINISHED;
        ctx.pipeline().remove(this); // what follows goes to the frame decoder
        done.trySuccess(agreed);
    }

    private void fail(ChannelHandlerContext ctx, ByteBuf in, StatusCode status, String why) {
        state = State.FINISHED;
        in.skipBytes(in.readableBytes());
        done.tryFailure(new RemoteException(status, why, null));
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        String during = state == State.ANSWER
                ? "during the protocol handshake (a server older than protocol 4 closes it so)"
                : "during authentication as " + identityLabel();
        done.tryFailure(RemoteException.noAnswer(remote + " closed the connection " + during, null));
        super.channelInactive(ctx);
    }
}
