package io.estuary.network.server;

import io.estuary.common.status.StatusCode;
import io.estuary.common.time.Clock;
import io.estuary.common.util.RateLimitedLog;
import io.estuary.network.auth.AuthExchange;
import io.estuary.network.auth.AuthFailure;
import io.estuary.network.auth.Identity;
import io.estuary.network.auth.ServerAuth;
import io.estuary.network.protocol.Handshake;
import io.estuary.network.protocol.ProtocolRange;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's side of the {@link Handshake} and, from protocol 6 on, of the {@link AuthExchange}: reads the client's
 * hello, answers with the version the connection uses ({@link Handshake#answer}), records it on the channel
 * ({@link Handshake#AGREED_VERSION}); then authenticates the peer as its {@link ServerAuth} says, sets the identity
 * proven on the channel ({@link Identity#ATTRIBUTE}) and removes itself (frames follow), or refuses and closes the
 * connection. Bytes that arrive after the exchange in the same read pass on to the frame decoder; bytes that arrive
 * while the secret lookup runs wait in this decoder's buffer. Something that is not a hello (no magic: a client of a
 * release before the handshake, or not Estuary at all) is closed without an answer, since it would misread one.
 *
 * <p>Every refused or cut authentication is counted ({@link TransportObserver#authenticationFailed}) and logged WARN
 * with the peer's address through the server's {@link RateLimitedLog}. Confined to the channel's event loop: an
 * asynchronous {@link io.estuary.network.auth.SecretLookup} continues there, and never blocks it.
 */
final class ServerHandshake extends ByteToMessageDecoder {
    private static final Logger LOG = LoggerFactory.getLogger(ServerHandshake.class);

    /** Bytes a client may send before it has the challenge (a correct one sends none). */
    private static final int MAX_EARLY_BYTES = 4096;

    private enum State {
        HELLO,
        AUTH_HELLO,
        LOOKUP,
        PROOF,
        FINISHED
    }

    private final String serverName;
    private final ProtocolRange speaks;
    private final ServerAuth auth;
    private final TransportObserver observer;
    private final RateLimitedLog warnings;

    private State state = State.HELLO;
    private boolean decoding;
    private Identity claimed;
    private byte[] clientNonce;
    private byte[] expectedProof;
    private ScheduledFuture<?> lookupTimeout;

    ServerHandshake(String serverName, ProtocolRange speaks) {
        this(serverName, speaks, ServerAuth.off(), TransportObserver.NONE, warnings(Clock.system()));
    }

    /** {@code warnings}: shared by every connection of one server (see {@link #warnings}). */
    ServerHandshake(
            String serverName,
            ProtocolRange speaks,
            ServerAuth auth,
            TransportObserver observer,
            RateLimitedLog warnings) {
        this.serverName = serverName;
        this.speaks = speaks;
        this.auth = auth;
        this.observer = observer;
        this.warnings = warnings;
    }

    /** One server's authentication warnings: at most one line every 10 seconds. */
    static RateLimitedLog warnings(Clock clock) {
        return new RateLimitedLog(LOG, 10_000, clock);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        decoding = true;
        try {
            switch (state) {
                case HELLO:
                    readHello(ctx, in);
                    break;
                case AUTH_HELLO:
                    readAuthHello(ctx, in);
                    break;
                case LOOKUP:
                    if (in.readableBytes() > MAX_EARLY_BYTES) {
                        refuse(
                                ctx,
                                in,
                                AuthFailure.MALFORMED,
                                StatusCode.BAD_REQUEST,
                                "sent " + in.readableBytes() + " bytes before the server's challenge");
                    }
                    break;
                case PROOF:
                    readProof(ctx, in);
                    break;
                default:
                    in.skipBytes(in.readableBytes());
            }
        } finally {
            decoding = false;
        }
    }

    private void readHello(ChannelHandlerContext ctx, ByteBuf in) {
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
            state = State.FINISHED;
            in.skipBytes(in.readableBytes());
            ctx.close();
            return;
        }
        Handshake.Answer answer = Handshake.answer(speaks, clientVersion);
        if (answer.accepted() && !AuthExchange.runsAt(answer.version) && auth.mode() == ServerAuth.Mode.ENFORCE) {
            // Release 0.1.0 knows only outcomes 0 and 1: a refusal is the one answer it reads as "not this server".
            refuseOldPeer(ctx, in, answer.version);
            return;
        }
        ByteBuf bytes = ctx.alloc().buffer(Handshake.ANSWER_SIZE);
        Handshake.writeAnswer(bytes, answer);
        if (!answer.accepted()) {
            LOG.warn(
                    "{}: refused {}: {}",
                    serverName,
                    ctx.channel().remoteAddress(),
                    Handshake.mismatch(ProtocolRange.only(clientVersion), "this server", speaks.toString()));
            state = State.FINISHED;
            in.skipBytes(in.readableBytes());
            ctx.writeAndFlush(bytes).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        ctx.channel().attr(Handshake.AGREED_VERSION).set(answer.version);
        ctx.writeAndFlush(bytes);
        if (AuthExchange.runsAt(answer.version)) {
            state = State.AUTH_HELLO;
        } else if (auth.isOff()) {
            finish(ctx, Identity.UNCHECKED);
        } else {
            admitUnchecked(ctx, "speaks protocol " + answer.version + " (release 0.1.0), which cannot authenticate");
            finish(ctx, Identity.UNCHECKED);
        }
    }

    private void refuseOldPeer(ChannelHandlerContext ctx, ByteBuf in, int version) {
        state = State.FINISHED;
        in.skipBytes(in.readableBytes());
        observer.authenticationFailed(AuthFailure.OLD_PROTOCOL);
        warnings.warn(
                "{}: refused {}: it speaks protocol {} (release 0.1.0), which cannot authenticate, and this server "
                        + "enforces authentication (estuary.auth.mode=permissive admits such peers during a rolling "
                        + "upgrade)",
                serverName,
                ctx.channel().remoteAddress(),
                version);
        int newest = Math.max(speaks.newest(), AuthExchange.FIRST_VERSION);
        ByteBuf bytes = ctx.alloc().buffer(Handshake.ANSWER_SIZE);
        Handshake.writeAnswer(bytes, new Handshake.Answer(newest, Handshake.REFUSED));
        ctx.writeAndFlush(bytes).addListener(ChannelFutureListener.CLOSE);
    }

    private void readAuthHello(ChannelHandlerContext ctx, ByteBuf in) {
        if (in.readableBytes() < 2) return;
        int len = in.getUnsignedShort(in.readerIndex());
        if (len > AuthExchange.MAX_IDENTITY_BYTES) {
            refuse(
                    ctx,
                    in,
                    AuthFailure.MALFORMED,
                    StatusCode.BAD_REQUEST,
                    "an identity name of " + len + " bytes (at most " + AuthExchange.MAX_IDENTITY_BYTES + ")");
            return;
        }
        if (in.readableBytes() < 2 + len + AuthExchange.NONCE_BYTES) return;
        in.skipBytes(2);
        String name = in.readCharSequence(len, StandardCharsets.UTF_8).toString();
        clientNonce = new byte[AuthExchange.NONCE_BYTES];
        in.readBytes(clientNonce);
        if (auth.isOff()) {
            admit(ctx, Identity.UNCHECKED);
        } else if (name.isEmpty()) {
            if (auth.mode() == ServerAuth.Mode.PERMISSIVE) {
                admitUnchecked(ctx, "proved no identity");
                admit(ctx, Identity.UNCHECKED);
            } else if (auth.admitsAnonymous()) {
                admit(ctx, Identity.ANONYMOUS);
            } else {
                refuse(
                        ctx,
                        in,
                        AuthFailure.ANONYMOUS_REFUSED,
                        StatusCode.UNAUTHENTICATED,
                        serverName
                                + " admits only authenticated connections, and this client has no credentials "
                                + "(docs/security.md)");
            }
        } else {
            claimed = Identity.parse(name);
            if (claimed == null) {
                refuse(
                        ctx,
                        in,
                        AuthFailure.MALFORMED,
                        StatusCode.UNAUTHENTICATED,
                        "unknown kind of identity '" + PeerNames.printable(name)
                                + "' (expected \"cluster\" or \"app:<id>\")");
                return;
            }
            lookUp(ctx);
        }
    }

    private void lookUp(ChannelHandlerContext ctx) {
        state = State.LOOKUP;
        CompletableFuture<byte[]> secret;
        try {
            secret = auth.lookup().secretOf(claimed);
            if (secret == null) throw new IllegalStateException("the secret lookup returned no future");
        } catch (RuntimeException e) {
            secret = new CompletableFuture<>();
            secret.completeExceptionally(e);
        }
        lookupTimeout = ctx.executor()
                .schedule(
                        () -> onSecret(
                                ctx,
                                null,
                                new java.util.concurrent.TimeoutException(
                                        "no answer within " + auth.lookupTimeoutMs() + " ms")),
                        auth.lookupTimeoutMs(),
                        TimeUnit.MILLISECONDS);
        secret.whenComplete((s, e) -> {
            if (ctx.executor().inEventLoop()) onSecret(ctx, s, e);
            else ctx.executor().execute(() -> onSecret(ctx, s, e));
        });
    }

    /** On the event loop: the lookup answered (or timed out). */
    private void onSecret(ChannelHandlerContext ctx, byte[] secret, Throwable error) {
        if (state != State.LOOKUP) return; // closed (counted as cut), timed out, or answered already
        lookupTimeout.cancel(false);
        if (error != null) {
            Throwable cause =
                    error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            refuse(
                    ctx,
                    null,
                    AuthFailure.LOOKUP_FAILED,
                    StatusCode.UNAUTHENTICATED,
                    serverName + " cannot check the secret of " + PeerNames.printable(claimed.name()) + " now: "
                            + cause);
            return;
        }
        if (secret == null) {
            refuse(ctx, null, AuthFailure.UNKNOWN_IDENTITY, StatusCode.UNAUTHENTICATED, PeerNames.unknown(claimed));
            return;
        }
        byte[] serverNonce = AuthExchange.nonce();
        expectedProof = AuthExchange.clientProof(secret, claimed.name(), clientNonce, serverNonce);
        ByteBuf challenge = ctx.alloc().buffer(1 + AuthExchange.NONCE_BYTES + AuthExchange.PROOF_BYTES);
        challenge
                .writeByte(AuthExchange.PROVE)
                .writeBytes(serverNonce)
                .writeBytes(AuthExchange.serverProof(secret, claimed.name(), clientNonce, serverNonce));
        ctx.writeAndFlush(challenge);
        state = State.PROOF;
        if (!decoding && internalBuffer().isReadable()) {
            // Bytes that came while the lookup ran: decode them now, no further read may come.
            try {
                channelRead(ctx, Unpooled.EMPTY_BUFFER);
            } catch (Exception e) {
                ctx.fireExceptionCaught(e);
            }
        }
    }

    private void readProof(ChannelHandlerContext ctx, ByteBuf in) {
        if (in.readableBytes() < AuthExchange.PROOF_BYTES) return;
        byte[] proof = new byte[AuthExchange.PROOF_BYTES];
        in.readBytes(proof);
        if (!AuthExchange.matches(expectedProof, proof)) {
            refuse(
                    ctx,
                    in,
                    AuthFailure.WRONG_PROOF,
                    StatusCode.UNAUTHENTICATED,
                    "wrong proof for " + PeerNames.printable(claimed.name())
                            + ": the client does not hold that identity's secret");
            return;
        }
        ByteBuf result = ctx.alloc().buffer(3);
        AuthExchange.writeStatus(result, StatusCode.OK, "");
        ctx.writeAndFlush(result);
        finish(ctx, claimed);
    }

    /** ADMITTED: the exchange ends without proof. */
    private void admit(ChannelHandlerContext ctx, Identity identity) {
        ctx.writeAndFlush(ctx.alloc().buffer(1).writeByte(AuthExchange.ADMITTED));
        finish(ctx, identity);
    }

    private void admitUnchecked(ChannelHandlerContext ctx, String why) {
        observer.admittedUnauthenticated();
        warnings.warn(
                "{}: admitted {} unchecked (permissive mode): it {}",
                serverName,
                ctx.channel().remoteAddress(),
                why);
    }

    /** The identity is set before the frame decoder sees a byte; what follows in the buffer goes on to it. */
    private void finish(ChannelHandlerContext ctx, Identity identity) {
        state = State.FINISHED;
        ctx.channel().attr(Identity.ATTRIBUTE).set(identity);
        ctx.pipeline().remove(this);
    }

    /** A refusal: CHALLENGE or RESULT with {@code status} (same layout), counted, logged, then closed. */
    private void refuse(ChannelHandlerContext ctx, ByteBuf in, AuthFailure reason, StatusCode status, String message) {
        state = State.FINISHED;
        if (lookupTimeout != null) lookupTimeout.cancel(false);
        if (in != null) in.skipBytes(in.readableBytes());
        observer.authenticationFailed(reason);
        warnings.warn(
                "{}: refused the connection of {} ({}): {}",
                serverName,
                ctx.channel().remoteAddress(),
                reason.label(),
                message);
        ByteBuf bytes = ctx.alloc().buffer();
        AuthExchange.writeStatus(bytes, status, message);
        ctx.writeAndFlush(bytes).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (state == State.AUTH_HELLO || state == State.LOOKUP || state == State.PROOF) {
            State was = state;
            state = State.FINISHED;
            if (lookupTimeout != null) lookupTimeout.cancel(false);
            observer.authenticationFailed(AuthFailure.CUT);
            warnings.warn(
                    "{}: {} closed the connection during authentication (waiting for its {})",
                    serverName,
                    ctx.channel().remoteAddress(),
                    was == State.PROOF ? "proof" : was == State.LOOKUP ? "secret's lookup" : "identity");
        }
        super.channelInactive(ctx);
    }
}
