package io.estuary.network.server;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.status.StatusCode;
import io.estuary.common.time.Clock;
import io.estuary.network.auth.AuthExchange;
import io.estuary.network.auth.AuthFailure;
import io.estuary.network.auth.Identity;
import io.estuary.network.auth.SecretLookup;
import io.estuary.network.auth.ServerAuth;
import io.estuary.network.protocol.Handshake;
import io.estuary.network.protocol.ProtocolRange;
import io.estuary.network.testing.FrozenChannels;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The server's side of the protocol-6 authentication exchange on a real pipeline, byte by byte, against good clients,
 * wrong secrets, replays, reflections, cut connections and garbage. Every test ends by releasing the channel, so the
 * paranoid leak detector sees every buffer.
 */
class ServerAuthHandshakeTest {
    private static final byte[] CLUSTER_SECRET = secret(1);
    private static final byte[] APP_SECRET = secret(2);
    private static final SecretLookup LOOKUP = id -> CompletableFuture.completedFuture(
            id.isCluster() ? CLUSTER_SECRET : "app-1".equals(id.appId()) ? APP_SECRET : null);

    private static byte[] secret(int seed) {
        byte[] s = new byte[32];
        Arrays.fill(s, (byte) seed);
        return s;
    }

    /** Counts what the handshake reports. */
    static final class Recorder implements TransportObserver {
        final List<AuthFailure> failures = new CopyOnWriteArrayList<>();
        final AtomicInteger admittedUnchecked = new AtomicInteger();

        @Override
        public void authenticationFailed(AuthFailure reason) {
            failures.add(reason);
        }

        @Override
        public void admittedUnauthenticated() {
            admittedUnchecked.incrementAndGet();
        }
    }

    private final Recorder observer = new Recorder();

    /** A channel whose clock stands still until a test moves it, so that deadlines count only the time tests add. */
    private EmbeddedChannel channel(ServerAuth auth) {
        return FrozenChannels.of(
                new ServerHandshake(
                        "test", ProtocolRange.THIS_RELEASE, auth, observer, ServerHandshake.warnings(Clock.system())),
                new ChannelInboundHandlerAdapter());
    }

    private static ByteBuf hello(int version) {
        ByteBuf b = Unpooled.buffer();
        Handshake.writeHello(b, version);
        return b;
    }

    private static ByteBuf authHello(String identity, byte[] clientNonce) {
        ByteBuf b = hello(6);
        AuthExchange.writeHello(b, identity, clientNonce);
        return b;
    }

    /** Reads the version answer: {version, outcome}. */
    private static int[] answer(EmbeddedChannel ch) {
        ByteBuf a = ch.readOutbound();
        try {
            assertEquals(Handshake.ANSWER_SIZE, a.readableBytes());
            assertEquals(Handshake.MAGIC, a.readInt());
            return new int[] {a.readInt(), a.readByte()};
        } finally {
            a.release();
        }
    }

    /** The server's challenge after outcome PROVE: {server nonce, server proof}. */
    private static byte[][] challenge(EmbeddedChannel ch) {
        ByteBuf c = ch.readOutbound();
        try {
            assertEquals(AuthExchange.PROVE, c.readByte(), "the server asks for a proof");
            byte[] nonce = new byte[32];
            byte[] proof = new byte[32];
            c.readBytes(nonce).readBytes(proof);
            assertFalse(c.isReadable());
            return new byte[][] {nonce, proof};
        } finally {
            c.release();
        }
    }

    /** A status the server sent (a refusing challenge or a result). */
    private static AuthExchange.Status status(EmbeddedChannel ch) {
        ByteBuf s = ch.readOutbound();
        try {
            AuthExchange.Status st = AuthExchange.readStatus(s);
            assertNotNull(st);
            assertFalse(s.isReadable());
            return st;
        } finally {
            s.release();
        }
    }

    private static byte outcome(EmbeddedChannel ch) {
        ByteBuf b = ch.readOutbound();
        try {
            assertEquals(1, b.readableBytes());
            return b.readByte();
        } finally {
            b.release();
        }
    }

    private static ByteBuf bytes(byte[] b) {
        return Unpooled.wrappedBuffer(b);
    }

    /** Runs a whole good exchange as {@code identity}; returns {client nonce, server nonce, client proof}. */
    private byte[][] authenticate(EmbeddedChannel ch, String identity, byte[] secret, int trailingInt) {
        byte[] cn = AuthExchange.nonce();
        ch.writeInbound(authHello(identity, cn));
        assertArrayEquals(new int[] {6, Handshake.ACCEPTED}, answer(ch));
        byte[][] sc = challenge(ch);
        assertArrayEquals(
                AuthExchange.serverProof(secret, identity, cn, sc[0]), sc[1], "the server proves it knows the secret");
        byte[] proof = AuthExchange.clientProof(secret, identity, cn, sc[0]);
        ch.writeInbound(
                Unpooled.buffer().writeBytes(proof).writeInt(trailingInt)); // the first frame's bytes in the same read
        AuthExchange.Status result = status(ch);
        assertEquals(StatusCode.OK, result.code, result.message);
        return new byte[][] {cn, sc[0], proof};
    }

    private static void assertForwarded(EmbeddedChannel ch, int expected) {
        ByteBuf rest = ch.readInbound();
        assertEquals(expected, rest.readInt(), "bytes after the exchange go on to the frame decoder");
        assertFalse(rest.isReadable());
        rest.release();
    }

    @Test
    void theClusterProvesItselfAndFramesFollowInTheSameRead() {
        EmbeddedChannel ch = channel(ServerAuth.enforce(LOOKUP, false));
        authenticate(ch, "cluster", CLUSTER_SECRET, 42);
        assertEquals(Identity.CLUSTER, ch.attr(Identity.ATTRIBUTE).get());
        assertEquals(6, ch.attr(Handshake.AGREED_VERSION).get());
        assertNull(ch.pipeline().get(ServerHandshake.class), "the handshake leaves the pipeline");
        assertForwarded(ch, 42);
        assertTrue(ch.isOpen());
        assertEquals(java.util.Collections.emptyList(), observer.failures);
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void anApplicationProvesItselfWithItsOwnSecret() {
        EmbeddedChannel ch = channel(ServerAuth.permissive(LOOKUP));
        authenticate(ch, "app:app-1", APP_SECRET, 7);
        assertEquals(Identity.application("app-1"), ch.attr(Identity.ATTRIBUTE).get());
        assertForwarded(ch, 7);
        assertEquals(0, observer.admittedUnchecked.get());
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void aLookupThatCompletesLaterContinuesTheExchange() {
        CompletableFuture<byte[]> later = new CompletableFuture<>();
        EmbeddedChannel ch = channel(ServerAuth.enforce(id -> later, false));
        byte[] cn = AuthExchange.nonce();
        ch.writeInbound(authHello("app:app-1", cn));
        answer(ch);
        assertNull(ch.readOutbound(), "no challenge before the secret is known");
        assertTrue(ch.isOpen());
        later.complete(APP_SECRET);
        ch.runPendingTasks();
        byte[][] sc = challenge(ch);
        ch.writeInbound(bytes(AuthExchange.clientProof(APP_SECRET, "app:app-1", cn, sc[0])));
        assertEquals(StatusCode.OK, status(ch).code);
        assertEquals(Identity.application("app-1"), Identity.of(ch));
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void bytesSentDuringTheLookupAreReadWhenItCompletes() {
        CompletableFuture<byte[]> later = new CompletableFuture<>();
        EmbeddedChannel ch = channel(ServerAuth.enforce(id -> later, false));
        ch.writeInbound(authHello("app:app-1", AuthExchange.nonce()));
        answer(ch);
        ch.writeInbound(Unpooled.buffer().writeZero(32)); // a "proof" made without the server's nonce
        assertTrue(ch.isOpen(), "buffered while the lookup runs");
        later.complete(APP_SECRET);
        ch.runPendingTasks();
        challenge(ch);
        AuthExchange.Status refused = status(ch);
        assertEquals(StatusCode.UNAUTHENTICATED, refused.code);
        assertTrue(refused.message.contains("wrong proof for app:app-1"), refused.message);
        assertFalse(ch.isOpen());
        assertEquals(Arrays.asList(AuthFailure.WRONG_PROOF), observer.failures);
        ch.finishAndReleaseAll();
    }

    @Test
    void aWrongClientSecretIsRefusedAndClosed() {
        for (ServerAuth auth : new ServerAuth[] {ServerAuth.enforce(LOOKUP, true), ServerAuth.permissive(LOOKUP)}) {
            observer.failures.clear();
            EmbeddedChannel ch = channel(auth);
            byte[] cn = AuthExchange.nonce();
            ch.writeInbound(authHello("cluster", cn));
            answer(ch);
            byte[][] sc = challenge(ch);
            byte[] wrong = AuthExchange.clientProof(secret(9), "cluster", cn, sc[0]);
            ch.writeInbound(Unpooled.buffer().writeBytes(wrong).writeInt(1));
            AuthExchange.Status refused = status(ch);
            assertEquals(StatusCode.UNAUTHENTICATED, refused.code, auth.toString());
            assertTrue(refused.message.contains("does not hold that identity's secret"), refused.message);
            assertFalse(ch.isOpen());
            assertNull(ch.attr(Identity.ATTRIBUTE).get(), "no identity on a refused connection");
            assertNull(ch.readInbound(), "nothing reaches the frame decoder");
            assertEquals(Arrays.asList(AuthFailure.WRONG_PROOF), observer.failures);
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void anUnknownApplicationIsRefusedByName() {
        EmbeddedChannel ch = channel(ServerAuth.enforce(LOOKUP, true));
        ch.writeInbound(authHello("app:app-9", AuthExchange.nonce()));
        answer(ch);
        AuthExchange.Status refused = status(ch);
        assertEquals(StatusCode.UNAUTHENTICATED, refused.code);
        assertEquals("unknown application app-9: never registered, or expired", refused.message);
        assertFalse(ch.isOpen());
        assertEquals(Arrays.asList(AuthFailure.UNKNOWN_IDENTITY), observer.failures);
        ch.finishAndReleaseAll();
    }

    @Test
    void aFailedOrSlowLookupRefusesWithAMessage() {
        CompletableFuture<byte[]> failed = new CompletableFuture<>();
        failed.completeExceptionally(new IllegalStateException("master unreachable"));
        EmbeddedChannel ch = channel(ServerAuth.enforce(id -> failed, false));
        ch.writeInbound(authHello("app:app-1", AuthExchange.nonce()));
        answer(ch);
        AuthExchange.Status refused = status(ch);
        assertEquals(StatusCode.UNAUTHENTICATED, refused.code);
        assertTrue(refused.message.contains("master unreachable"), refused.message);
        assertFalse(ch.isOpen());
        ch.finishAndReleaseAll();

        CompletableFuture<byte[]> never = new CompletableFuture<>();
        EmbeddedChannel slow = channel(ServerAuth.enforce(id -> never, false).withLookupTimeoutMs(50));
        slow.writeInbound(authHello("app:app-1", AuthExchange.nonce()));
        answer(slow);
        slow.advanceTimeBy(51, TimeUnit.MILLISECONDS);
        slow.runScheduledPendingTasks();
        AuthExchange.Status timedOut = status(slow);
        assertEquals(StatusCode.UNAUTHENTICATED, timedOut.code);
        assertTrue(timedOut.message.contains("no answer within 50 ms"), timedOut.message);
        assertFalse(slow.isOpen());
        never.complete(APP_SECRET); // too late: ignored
        slow.runPendingTasks();
        assertNull(slow.readOutbound());
        assertEquals(Arrays.asList(AuthFailure.LOOKUP_FAILED, AuthFailure.LOOKUP_FAILED), observer.failures);
        slow.finishAndReleaseAll();
    }

    @Test
    void anonymousPeersAreAdmittedOnlyWhereThePortSaysSo() {
        EmbeddedChannel admits = channel(ServerAuth.enforce(LOOKUP, true));
        admits.writeInbound(authHello("", AuthExchange.nonce()).writeInt(5));
        answer(admits);
        assertEquals(AuthExchange.ADMITTED, outcome(admits));
        assertEquals(Identity.ANONYMOUS, admits.attr(Identity.ATTRIBUTE).get());
        assertForwarded(admits, 5);
        assertFalse(admits.finishAndReleaseAll());

        EmbeddedChannel refuses = channel(ServerAuth.enforce(LOOKUP, false));
        refuses.writeInbound(authHello("", AuthExchange.nonce()).writeInt(5));
        answer(refuses);
        AuthExchange.Status refused = status(refuses);
        assertEquals(StatusCode.UNAUTHENTICATED, refused.code);
        assertTrue(refused.message.contains("admits only authenticated connections"), refused.message);
        assertFalse(refuses.isOpen());
        assertNull(refuses.readInbound());
        assertEquals(Arrays.asList(AuthFailure.ANONYMOUS_REFUSED), observer.failures);
        refuses.finishAndReleaseAll();

        EmbeddedChannel permissive = channel(ServerAuth.permissive(LOOKUP));
        permissive.writeInbound(authHello("", AuthExchange.nonce()));
        answer(permissive);
        assertEquals(AuthExchange.ADMITTED, outcome(permissive));
        assertEquals(Identity.UNCHECKED, permissive.attr(Identity.ATTRIBUTE).get());
        assertEquals(1, observer.admittedUnchecked.get(), "counted");
        assertFalse(permissive.finishAndReleaseAll());
    }

    @Test
    void authenticationOffAdmitsEveryoneUnchecked() {
        EmbeddedChannel ch = channel(ServerAuth.off());
        ch.writeInbound(authHello("cluster", AuthExchange.nonce()));
        answer(ch);
        assertEquals(AuthExchange.ADMITTED, outcome(ch));
        assertEquals(Identity.UNCHECKED, Identity.of(ch));
        assertFalse(ch.finishAndReleaseAll());
        assertEquals(0, observer.admittedUnchecked.get(), "off is not the permissive mode");
    }

    @Test
    void aProtocol5PeerIsAdmittedUncheckedByPermissiveAndRefusedByEnforce() {
        EmbeddedChannel permissive = channel(ServerAuth.permissive(LOOKUP));
        permissive.writeInbound(hello(5).writeInt(3));
        assertArrayEquals(new int[] {5, Handshake.ACCEPTED}, answer(permissive), "as release 0.1.0 expects");
        assertNull(permissive.readOutbound(), "nothing 0.1.0 does not expect");
        assertEquals(Identity.UNCHECKED, Identity.of(permissive));
        assertForwarded(permissive, 3);
        assertEquals(1, observer.admittedUnchecked.get());
        assertFalse(permissive.finishAndReleaseAll());

        EmbeddedChannel off = channel(ServerAuth.off());
        off.writeInbound(hello(5));
        assertArrayEquals(new int[] {5, Handshake.ACCEPTED}, answer(off));
        assertEquals(Identity.UNCHECKED, Identity.of(off));
        assertFalse(off.finishAndReleaseAll());

        EmbeddedChannel enforce = channel(ServerAuth.enforce(LOOKUP, true));
        enforce.writeInbound(hello(5).writeInt(3));
        assertArrayEquals(new int[] {6, Handshake.REFUSED}, answer(enforce), "0.1.0 reads a refusal naming protocol 6");
        assertFalse(enforce.isOpen());
        assertNull(enforce.readInbound());
        assertNull(enforce.attr(Handshake.AGREED_VERSION).get());
        assertEquals(Arrays.asList(AuthFailure.OLD_PROTOCOL), observer.failures);
        assertEquals(1, observer.admittedUnchecked.get());
        enforce.finishAndReleaseAll();
    }

    @Test
    void aReplayedClientProofFailsOnANewConnection() {
        EmbeddedChannel first = channel(ServerAuth.enforce(LOOKUP, false));
        byte[][] recorded = authenticate(first, "cluster", CLUSTER_SECRET, 0);
        first.finishAndReleaseAll();

        EmbeddedChannel replay = channel(ServerAuth.enforce(LOOKUP, false));
        replay.writeInbound(authHello("cluster", recorded[0])); // the same client nonce as recorded
        answer(replay);
        byte[][] sc = challenge(replay);
        assertFalse(Arrays.equals(recorded[1], sc[0]), "the server's nonce is fresh");
        replay.writeInbound(bytes(recorded[2]));
        assertEquals(StatusCode.UNAUTHENTICATED, status(replay).code);
        assertFalse(replay.isOpen());
        assertEquals(Arrays.asList(AuthFailure.WRONG_PROOF), observer.failures);
        replay.finishAndReleaseAll();
    }

    @Test
    void theServersProofReflectedAsTheClientsFails() {
        EmbeddedChannel ch = channel(ServerAuth.enforce(LOOKUP, false));
        ch.writeInbound(authHello("cluster", AuthExchange.nonce()));
        answer(ch);
        byte[][] sc = challenge(ch);
        ch.writeInbound(bytes(sc[1]));
        assertEquals(StatusCode.UNAUTHENTICATED, status(ch).code);
        assertFalse(ch.isOpen());
        assertEquals(Arrays.asList(AuthFailure.WRONG_PROOF), observer.failures);
        ch.finishAndReleaseAll();
    }

    @Test
    void aHandshakeCutHalfwayIsCountedAndReleased() {
        EmbeddedChannel afterChallenge = channel(ServerAuth.enforce(LOOKUP, false));
        afterChallenge.writeInbound(authHello("cluster", AuthExchange.nonce()));
        answer(afterChallenge);
        challenge(afterChallenge);
        afterChallenge.writeInbound(Unpooled.buffer().writeZero(20)); // part of a proof, then the peer goes
        afterChallenge.close();
        assertEquals(Arrays.asList(AuthFailure.CUT), observer.failures);
        assertFalse(afterChallenge.finishAndReleaseAll());

        CompletableFuture<byte[]> later = new CompletableFuture<>();
        EmbeddedChannel duringLookup = channel(ServerAuth.enforce(id -> later, false));
        duringLookup.writeInbound(authHello("cluster", AuthExchange.nonce()).writeZero(10));
        answer(duringLookup);
        duringLookup.close();
        later.complete(CLUSTER_SECRET); // after the close: nothing is sent, nothing leaks
        duringLookup.runPendingTasks();
        assertNull(duringLookup.readOutbound());
        assertEquals(Arrays.asList(AuthFailure.CUT, AuthFailure.CUT), observer.failures);
        assertFalse(duringLookup.finishAndReleaseAll());

        EmbeddedChannel halfHello = channel(ServerAuth.enforce(LOOKUP, false));
        ByteBuf partial = authHello("cluster", AuthExchange.nonce());
        halfHello.writeInbound(partial.retainedSlice(0, partial.readableBytes() - 5));
        partial.release();
        answer(halfHello);
        halfHello.close();
        assertEquals(3, observer.failures.size());
        assertFalse(halfHello.finishAndReleaseAll());
    }

    @Test
    void garbageInsteadOfTheAuthHelloIsRefused() {
        EmbeddedChannel lengthy = channel(ServerAuth.enforce(LOOKUP, true));
        lengthy.writeInbound(hello(6).writeInt(0xdeadbeef).writeLong(-1));
        answer(lengthy);
        AuthExchange.Status refused = status(lengthy);
        assertEquals(StatusCode.BAD_REQUEST, refused.code);
        assertTrue(refused.message.contains("at most 512"), refused.message);
        assertFalse(lengthy.isOpen());
        lengthy.finishAndReleaseAll();

        EmbeddedChannel unknownKind = channel(ServerAuth.enforce(LOOKUP, true));
        unknownKind.writeInbound(authHello("root\n", AuthExchange.nonce()));
        answer(unknownKind);
        AuthExchange.Status kind = status(unknownKind);
        assertEquals(StatusCode.UNAUTHENTICATED, kind.code);
        assertTrue(kind.message.contains("unknown kind of identity 'root?'"), kind.message);
        assertFalse(unknownKind.isOpen());
        assertEquals(Arrays.asList(AuthFailure.MALFORMED, AuthFailure.MALFORMED), observer.failures);
        unknownKind.finishAndReleaseAll();
    }

    @Test
    void anOversizedIdentityIsRefusedBeforeItIsRead() {
        EmbeddedChannel ch = channel(ServerAuth.enforce(LOOKUP, true));
        ByteBuf in = hello(6).writeShort(513);
        in.writeBytes(new byte[513]).writeBytes(new byte[32]);
        ch.writeInbound(in);
        answer(ch);
        AuthExchange.Status refused = status(ch);
        assertEquals(StatusCode.BAD_REQUEST, refused.code);
        assertEquals("an identity name of 513 bytes (at most 512)", refused.message);
        assertFalse(ch.isOpen());
        ch.finishAndReleaseAll();
    }
}
