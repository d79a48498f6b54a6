package io.estuary.master.state.raft;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.io.netty.buffer.ByteBuf;
import org.apache.ratis.thirdparty.io.netty.buffer.Unpooled;
import org.apache.ratis.thirdparty.io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/** The Raft port's handshake on real Netty pipelines (embedded channels), both sides, good and bad peers. */
class RaftHandshakeTest {
    private final byte[] secret = RaftSecretFiles.random();
    private final RaftAuthFailures failures = new RaftAuthFailures();

    /**
     * A server channel whose clock stands still until a test moves it: the deadline is scheduled at registration, and
     * on a loaded machine real time between two steps would otherwise count toward it.
     */
    private EmbeddedChannel server() {
        return server(false);
    }

    /** As {@link #server()}, a port that admits plain Ratis peers when {@code permissive}. */
    private EmbeddedChannel server(boolean permissive) {
        return server(failures, permissive);
    }

    /**
     * As {@link #server(boolean)}, counting refusals in {@code f}. (The network module's {@code FrozenChannels} does
     * the same for Netty's own channels; the Raft handshake runs on Ratis' copy of Netty.)
     */
    private EmbeddedChannel server(RaftAuthFailures f, boolean permissive) {
        EmbeddedChannel ch = new EmbeddedChannel(false, false, new RaftHandshakeServer(secret, f, 5_000, permissive));
        ch.freezeTime();
        try {
            ch.register();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        return ch;
    }

    /** Moves everything {@code from} wrote to {@code to}'s inbound side; true if anything moved. */
    private static boolean pump(EmbeddedChannel from, EmbeddedChannel to) {
        boolean moved = false;
        for (ByteBuf b; (b = from.readOutbound()) != null; ) {
            moved = true;
            if (to.isOpen()) to.writeInbound(b);
            else b.release();
        }
        return moved;
    }

    private static void converse(EmbeddedChannel client, EmbeddedChannel server) {
        while (pump(client, server) | pump(server, client)) {
            // until neither side has anything more to say
        }
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        b.release();
        return out;
    }

    @Test
    void mastersWithTheSameSecretAreAdmittedAndRaftBytesFlowAfterwards() throws Exception {
        CompletableFuture<Void> done = new CompletableFuture<>();
        EmbeddedChannel client = new EmbeddedChannel(new RaftHandshakeClient(secret, "m1", done));
        EmbeddedChannel server = server();
        converse(client, server);
        done.get(1, TimeUnit.SECONDS);
        assertNull(server.pipeline().get(RaftHandshakeServer.class), "the handshake leaves the server pipeline");
        assertNull(client.pipeline().get(RaftHandshakeClient.class), "and the client's");
        client.writeOutbound(Unpooled.copiedBuffer("ratis", StandardCharsets.US_ASCII));
        converse(client, server);
        assertArrayEquals("ratis".getBytes(StandardCharsets.US_ASCII), bytes(server.readInbound()));
        assertEquals(0, failures.count());
        assertFalse(client.finishAndReleaseAll());
        assertFalse(server.finishAndReleaseAll());
    }

    @Test
    void bytesThatFollowTheProofInTheSameReadReachRatis() {
        EmbeddedChannel server = server();
        byte[] clientNonce = RaftHandshake.nonce();
        server.writeInbound(hello(clientNonce));
        ByteBuf challenge = server.readOutbound();
        byte[] serverNonce = new byte[RaftHandshake.NONCE_BYTES];
        challenge.readBytes(serverNonce);
        challenge.release();
        ByteBuf proofAndMore = Unpooled.buffer();
        proofAndMore.writeBytes(RaftHandshake.clientProof(secret, clientNonce, serverNonce));
        proofAndMore.writeBytes("frame".getBytes(StandardCharsets.US_ASCII));
        server.writeInbound(proofAndMore);
        assertArrayEquals(new byte[] {RaftHandshake.ADMITTED}, bytes(server.readOutbound()));
        assertArrayEquals("frame".getBytes(StandardCharsets.US_ASCII), bytes(server.readInbound()));
        assertTrue(server.isOpen());
        assertFalse(server.finishAndReleaseAll());
    }

    @Test
    void aClientWithAnotherSecretRejectsTheServerBeforeProvingAnything() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        EmbeddedChannel client = new EmbeddedChannel(new RaftHandshakeClient(RaftSecretFiles.random(), "m2", done));
        EmbeddedChannel server = server();
        converse(client, server);
        ExecutionException e = assertThrows(ExecutionException.class, () -> done.get(1, TimeUnit.SECONDS));
        assertInstanceOf(IOException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("m2 does not know this cluster's secret"), e.getMessage());
        assertFalse(client.isOpen());
        server.close(); // what the client's close does to the server's end
        assertEquals(1, failures.count(), "a handshake cut halfway is counted");
        assertFalse(server.finishAndReleaseAll());
    }

    @Test
    void aWrongProofIsRefusedAndTheConnectionClosed() {
        EmbeddedChannel server = server();
        server.writeInbound(hello(RaftHandshake.nonce()));
        ((ByteBuf) server.readOutbound()).release();
        server.writeInbound(Unpooled.wrappedBuffer(RaftSecretFiles.random())); // 32 bytes, not the proof
        assertArrayEquals(new byte[] {RaftHandshake.REFUSED}, bytes(server.readOutbound()));
        assertFalse(server.isOpen());
        assertEquals(1, failures.count());
        assertNull(server.readInbound(), "nothing reached Ratis");
        assertFalse(server.finishAndReleaseAll());
    }

    @Test
    void aReplayedHandshakeFails() throws Exception {
        // Record a good client's messages...
        CompletableFuture<Void> done = new CompletableFuture<>();
        EmbeddedChannel client = new EmbeddedChannel(new RaftHandshakeClient(secret, "m1", done));
        EmbeddedChannel first = server();
        ByteBuf hello = client.readOutbound();
        byte[] helloBytes = new byte[hello.readableBytes()];
        hello.getBytes(0, helloBytes);
        first.writeInbound(hello);
        client.writeInbound((ByteBuf) first.readOutbound());
        ByteBuf proof = client.readOutbound();
        byte[] proofBytes = new byte[proof.readableBytes()];
        proof.getBytes(0, proofBytes);
        first.writeInbound(proof);
        client.writeInbound((ByteBuf) first.readOutbound());
        done.get(1, TimeUnit.SECONDS);
        // ...and play them to another connection: its server nonce differs, so the old proof does not fit.
        EmbeddedChannel second = server();
        second.writeInbound(Unpooled.wrappedBuffer(helloBytes));
        ((ByteBuf) second.readOutbound()).release();
        second.writeInbound(Unpooled.wrappedBuffer(proofBytes));
        assertArrayEquals(new byte[] {RaftHandshake.REFUSED}, bytes(second.readOutbound()));
        assertFalse(second.isOpen());
        assertEquals(1, failures.count());
        assertFalse(client.finishAndReleaseAll());
        assertFalse(first.finishAndReleaseAll());
        assertFalse(second.finishAndReleaseAll());
    }

    @Test
    void garbageOrAPlainRatisPeerIsClosedWithoutAnAnswer() {
        EmbeddedChannel server = server();
        byte[] garbage = new byte[RaftHandshake.HELLO_BYTES];
        System.arraycopy("GET / HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII), 0, garbage, 0, 16);
        server.writeInbound(Unpooled.wrappedBuffer(garbage));
        assertFalse(server.isOpen());
        assertNull(server.readOutbound());
        assertNull(server.readInbound());
        assertEquals(1, failures.count());
        assertFalse(server.finishAndReleaseAll());
    }

    @Test
    void aPermissivePortHandsAPlainRatisPeersBytesToRatisAndCountsIt() {
        EmbeddedChannel server = server(true);
        // A Ratis frame as a master without authentication sends it: a varint length, then the message.
        byte[] frame = {5, 0x1a, 3, 'a', 'b', 'c'};
        server.writeInbound(Unpooled.wrappedBuffer(frame));
        assertArrayEquals(frame, bytes(server.readInbound()), "every byte, unread, goes on to Ratis");
        assertNull(server.pipeline().get(RaftHandshakeServer.class));
        assertNull(server.readOutbound(), "no handshake answer");
        assertTrue(server.isOpen());
        assertEquals(0, failures.count());
        assertEquals(1, failures.admittedCount());
        assertFalse(server.finishAndReleaseAll());
    }

    @Test
    void aPermissivePortStillAuthenticatesPeersThatStartTheHandshake() throws Exception {
        CompletableFuture<Void> done = new CompletableFuture<>();
        EmbeddedChannel client = new EmbeddedChannel(new RaftHandshakeClient(secret, "m1", done));
        EmbeddedChannel server = server(true);
        converse(client, server);
        done.get(1, TimeUnit.SECONDS);
        assertEquals(0, failures.admittedCount(), "it proved the secret: not admitted unchecked");
        assertFalse(client.finishAndReleaseAll());
        assertFalse(server.finishAndReleaseAll());

        // A wrong proof is refused in the permissive mode too.
        EmbeddedChannel other = server(true);
        other.writeInbound(hello(RaftHandshake.nonce()));
        ((ByteBuf) other.readOutbound()).release();
        other.writeInbound(Unpooled.wrappedBuffer(RaftSecretFiles.random()));
        assertArrayEquals(new byte[] {RaftHandshake.REFUSED}, bytes(other.readOutbound()));
        assertFalse(other.isOpen());
        assertEquals(1, failures.count());
        assertNull(other.readInbound(), "nothing reached Ratis");
        assertFalse(other.finishAndReleaseAll());
    }

    @Test
    void anEnforcingPortRefusesAPlainRatisPeerAtItsFirstFourBytes() {
        EmbeddedChannel server = server();
        server.writeInbound(Unpooled.wrappedBuffer(new byte[] {5, 0x1a, 3, 'a'}));
        assertFalse(server.isOpen(), "a short first frame need not fill a whole hello to be refused");
        assertNull(server.readInbound());
        assertEquals(1, failures.count());
        assertFalse(server.finishAndReleaseAll());
    }

    @Test
    void aPeerThatLeavesWithoutSendingAByteIsNotARefusal() {
        EmbeddedChannel server = server();
        server.close();
        assertEquals(0, failures.count(), "a probe, or a master stopping while it connected");
        assertFalse(server.finishAndReleaseAll());
    }

    @Test
    void aSilentPeerIsClosedAtTheDeadline() {
        EmbeddedChannel server = server();
        server.advanceTimeBy(5_001, TimeUnit.MILLISECONDS);
        server.runScheduledPendingTasks();
        assertFalse(server.isOpen());
        assertEquals(1, failures.count());
        assertFalse(server.finishAndReleaseAll());
    }

    @Test
    void aHandshakeLeftHalfwayIsClosedAtTheDeadline() {
        EmbeddedChannel server = server();
        server.writeInbound(Unpooled.wrappedBuffer(new byte[] {0x45, 0x52}));
        server.advanceTimeBy(4_999, TimeUnit.MILLISECONDS);
        server.runScheduledPendingTasks();
        assertTrue(server.isOpen());
        server.advanceTimeBy(2, TimeUnit.MILLISECONDS);
        server.runScheduledPendingTasks();
        assertFalse(server.isOpen());
        assertEquals(1, failures.count());
        assertFalse(server.finishAndReleaseAll());
    }

    @Test
    void aClientRefusedByTheServerFailsWithAMessageNamingIt() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        EmbeddedChannel client = new EmbeddedChannel(new RaftHandshakeClient(secret, "m3", done));
        ByteBuf hello = client.readOutbound();
        hello.skipBytes(5);
        byte[] clientNonce = new byte[RaftHandshake.NONCE_BYTES];
        hello.readBytes(clientNonce);
        hello.release();
        byte[] serverNonce = RaftHandshake.nonce();
        ByteBuf challenge = Unpooled.buffer();
        challenge.writeBytes(serverNonce).writeBytes(RaftHandshake.serverProof(secret, clientNonce, serverNonce));
        client.writeInbound(challenge);
        ((ByteBuf) client.readOutbound()).release();
        client.writeInbound(Unpooled.wrappedBuffer(new byte[] {RaftHandshake.REFUSED}));
        ExecutionException e = assertThrows(ExecutionException.class, () -> done.get(1, TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains("m3 refused"), e.getMessage());
        assertFalse(client.isOpen());
        assertFalse(client.finishAndReleaseAll());
    }

    /** The first bytes of a TLS 1.2/1.3 ClientHello record, as a master with TLS on its Raft port opens with. */
    private static ByteBuf tlsClientHello() {
        return Unpooled.wrappedBuffer(new byte[] {22, 3, 1, 0, (byte) 0xc8, 1, 0, 0, (byte) 0xc4, 3, 3});
    }

    @Test
    void aTlsHelloOnAPlainPortIsRefusedNamingTheSettingEvenWhenPermissive() {
        for (boolean permissive : new boolean[] {false, true}) {
            RaftAuthFailures f = new RaftAuthFailures();
            try (RaftRefusalLog log = RaftRefusalLog.attach()) {
                EmbeddedChannel server = server(f, permissive);
                server.writeInbound(tlsClientHello());
                assertFalse(server.isOpen(), "closed (permissive " + permissive + ")");
                assertNull(server.readInbound(), "nothing reaches Ratis");
                assertEquals(1, f.count());
                assertEquals(0, f.admittedCount());
                assertTrue(log.has("WARN", "it opened with TLS"), "the WARN names the mismatch");
                assertTrue(log.has("WARN", "estuary.tls.internal.enabled"), "and the setting");
                assertFalse(server.finishAndReleaseAll());
            }
        }
    }

    @Test
    void aPlainClientAnsweredWithTlsFailsNamingTheSetting() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        EmbeddedChannel client = new EmbeddedChannel(new RaftHandshakeClient(secret, "m4", done));
        ((ByteBuf) client.readOutbound()).release();
        // A TLS server's answer to bytes that are not TLS: an alert record.
        client.writeInbound(Unpooled.wrappedBuffer(new byte[] {21, 3, 3, 0, 2, 2, 50}));
        ExecutionException e = assertThrows(ExecutionException.class, () -> done.get(1, TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains("m4 answered with TLS"), e.getMessage());
        assertTrue(e.getCause().getMessage().contains("estuary.tls.internal.enabled"), e.getMessage());
        assertFalse(client.isOpen());
        assertFalse(client.finishAndReleaseAll());
    }

    @Test
    void aShortSecretIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> RaftHandshake.checkSecret(new byte[8]));
        assertThrows(IllegalArgumentException.class, () -> RaftHandshake.checkSecret(null));
    }

    @Test
    void refusalsAreAllCountedButLoggedAtMostOncePerInterval() {
        long[] now = {0};
        RaftAuthFailures f = new RaftAuthFailures(() -> now[0]);
        for (int i = 0; i < 5; i++) f.refused("peer", "test");
        now[0] += TimeUnit.SECONDS.toNanos(11);
        f.refused("peer", "test");
        assertEquals(6, f.count());
    }

    private static ByteBuf hello(byte[] clientNonce) {
        return Unpooled.buffer()
                .writeInt(RaftHandshake.MAGIC)
                .writeByte(RaftHandshake.VERSION)
                .writeBytes(clientNonce);
    }
}
