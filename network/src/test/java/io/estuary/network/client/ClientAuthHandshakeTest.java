package io.estuary.network.client;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.status.StatusCode;
import io.estuary.network.auth.AuthExchange;
import io.estuary.network.auth.Credentials;
import io.estuary.network.protocol.Handshake;
import io.estuary.network.protocol.ProtocolRange;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The client's side of the protocol-6 authentication exchange on a real pipeline: it proves its credentials, checks
 * the server's proof (a server that does not know the secret is refused before the client proves anything), and
 * reports a server's refusal with the server's status and words.
 */
class ClientAuthHandshakeTest {
    private static final byte[] SECRET = filled(3);
    private static final Credentials APP = Credentials.application("app-1", SECRET);

    private static byte[] filled(int b) {
        byte[] s = new byte[32];
        Arrays.fill(s, (byte) b);
        return s;
    }

    /** Connects, reads the hello, answers version 6: returns the channel with the AUTH_HELLO's client nonce read. */
    private static EmbeddedChannel accepted(ClientHandshake h, String expectedIdentity, byte[] clientNonce) {
        EmbeddedChannel ch = new EmbeddedChannel(h, new ChannelInboundHandlerAdapter());
        ByteBuf hello = ch.readOutbound();
        hello.release();
        ByteBuf answer = Unpooled.buffer();
        Handshake.writeAnswer(answer, new Handshake.Answer(6, Handshake.ACCEPTED));
        ch.writeInbound(answer);
        ByteBuf authHello = ch.readOutbound();
        try {
            int len = authHello.readUnsignedShort();
            assertEquals(
                    expectedIdentity,
                    authHello.readCharSequence(len, StandardCharsets.UTF_8).toString());
            authHello.readBytes(clientNonce);
            assertFalse(authHello.isReadable());
        } finally {
            authHello.release();
        }
        assertFalse(h.done().isDone(), "not done before the server's answer");
        return ch;
    }

    private static ByteBuf challenge(byte[] serverNonce, byte[] serverProof) {
        return Unpooled.buffer()
                .writeByte(AuthExchange.PROVE)
                .writeBytes(serverNonce)
                .writeBytes(serverProof);
    }

    private static ByteBuf status(StatusCode code, String message) {
        ByteBuf b = Unpooled.buffer();
        AuthExchange.writeStatus(b, code, message);
        return b;
    }

    @Test
    void provesItsIdentityAfterCheckingTheServersProof() {
        ClientHandshake h = new ClientHandshake("srv", ProtocolRange.THIS_RELEASE, 6, APP);
        byte[] cn = new byte[32];
        EmbeddedChannel ch = accepted(h, "app:app-1", cn);
        byte[] sn = AuthExchange.nonce();
        ch.writeInbound(challenge(sn, AuthExchange.serverProof(SECRET, "app:app-1", cn, sn)));
        ByteBuf proof = ch.readOutbound();
        byte[] sent = new byte[32];
        proof.readBytes(sent);
        assertFalse(proof.isReadable());
        proof.release();
        assertArrayEquals(AuthExchange.clientProof(SECRET, "app:app-1", cn, sn), sent);
        assertFalse(h.done().isDone());
        ch.writeInbound(status(StatusCode.OK, "").writeInt(11)); // a frame right behind the result
        assertEquals(6, h.done().getNow());
        assertNull(ch.pipeline().get(ClientHandshake.class));
        ByteBuf rest = ch.readInbound();
        assertEquals(11, rest.readInt());
        rest.release();
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void aServerThatDoesNotKnowTheSecretIsRefusedBeforeTheClientProvesAnything() {
        ClientHandshake h = new ClientHandshake("srv:1", ProtocolRange.THIS_RELEASE, 6, APP);
        byte[] cn = new byte[32];
        EmbeddedChannel ch = accepted(h, "app:app-1", cn);
        byte[] sn = AuthExchange.nonce();
        ch.writeInbound(challenge(sn, AuthExchange.serverProof(filled(4), "app:app-1", cn, sn)));
        RemoteException e = (RemoteException) h.done().cause();
        assertEquals(StatusCode.UNAUTHENTICATED, e.status());
        assertTrue(
                e.getMessage().contains("the server at srv:1 does not know the secret of app:app-1"), e.getMessage());
        assertNull(ch.readOutbound(), "no proof is sent to a server that proved nothing");
        assertFalse(ch.isOpen());
        ch.finishAndReleaseAll();
    }

    @Test
    void aServerProofReflectedFromTheClientsLabelFails() {
        ClientHandshake h = new ClientHandshake("srv", ProtocolRange.THIS_RELEASE, 6, APP);
        byte[] cn = new byte[32];
        EmbeddedChannel ch = accepted(h, "app:app-1", cn);
        byte[] sn = AuthExchange.nonce();
        ch.writeInbound(challenge(sn, AuthExchange.clientProof(SECRET, "app:app-1", cn, sn)));
        assertEquals(StatusCode.UNAUTHENTICATED, ((RemoteException) h.done().cause()).status());
        assertNull(ch.readOutbound());
        ch.finishAndReleaseAll();
    }

    @Test
    void aRefusalCarriesTheServersStatusAndWords() {
        ClientHandshake challenged = new ClientHandshake("srv", ProtocolRange.THIS_RELEASE, 6, APP);
        EmbeddedChannel ch = accepted(challenged, "app:app-1", new byte[32]);
        ch.writeInbound(status(StatusCode.UNAUTHENTICATED, "unknown application app-1: never registered, or expired"));
        RemoteException e = (RemoteException) challenged.done().cause();
        assertEquals(StatusCode.UNAUTHENTICATED, e.status());
        assertEquals(
                "the server at srv refused the connection as app:app-1: unknown application app-1: never "
                        + "registered, or expired",
                e.getMessage());
        assertFalse(ch.isOpen());
        ch.finishAndReleaseAll();

        ClientHandshake proved = new ClientHandshake("srv", ProtocolRange.THIS_RELEASE, 6, APP);
        byte[] cn = new byte[32];
        EmbeddedChannel ch2 = accepted(proved, "app:app-1", cn);
        byte[] sn = AuthExchange.nonce();
        ch2.writeInbound(challenge(sn, AuthExchange.serverProof(SECRET, "app:app-1", cn, sn)));
        ((ByteBuf) ch2.readOutbound()).release();
        ch2.writeInbound(status(StatusCode.UNAUTHENTICATED, "wrong proof"));
        assertEquals(
                StatusCode.UNAUTHENTICATED, ((RemoteException) proved.done().cause()).status());
        assertFalse(ch2.isOpen());
        ch2.finishAndReleaseAll();
    }

    @Test
    void anAnonymousClientIsAdmittedOrFailsWhenAskedForAProof() {
        ClientHandshake admitted = new ClientHandshake("srv", ProtocolRange.THIS_RELEASE, 6);
        EmbeddedChannel ch = accepted(admitted, "", new byte[32]);
        ch.writeInbound(Unpooled.buffer().writeByte(AuthExchange.ADMITTED));
        assertEquals(6, admitted.done().getNow());
        assertFalse(ch.finishAndReleaseAll());

        ClientHandshake asked = new ClientHandshake("srv", ProtocolRange.THIS_RELEASE, 6);
        EmbeddedChannel ch2 = accepted(asked, "", new byte[32]);
        ch2.writeInbound(challenge(new byte[32], new byte[32]));
        RemoteException e = (RemoteException) asked.done().cause();
        assertEquals(StatusCode.UNAUTHENTICATED, e.status());
        assertTrue(e.getMessage().contains("no credentials"), e.getMessage());
        ch2.finishAndReleaseAll();
    }

    @Test
    void aProtocol5ServerGetsNoExchange() {
        ClientHandshake h = new ClientHandshake("old", ProtocolRange.THIS_RELEASE, 6, APP);
        EmbeddedChannel ch = new EmbeddedChannel(h, new ChannelInboundHandlerAdapter());
        ((ByteBuf) ch.readOutbound()).release();
        ByteBuf answer = Unpooled.buffer();
        Handshake.writeAnswer(answer, new Handshake.Answer(5, Handshake.ACCEPTED_AT));
        ch.writeInbound(answer.writeInt(9));
        assertEquals(5, h.done().getNow());
        assertNull(ch.readOutbound(), "nothing a release-0.1.0 server does not expect");
        ByteBuf rest = ch.readInbound();
        assertEquals(9, rest.readInt());
        rest.release();
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void aConnectionClosedDuringAuthenticationSaysSo() {
        ClientHandshake h = new ClientHandshake("srv", ProtocolRange.THIS_RELEASE, 6, APP);
        EmbeddedChannel ch = accepted(h, "app:app-1", new byte[32]);
        ch.close();
        RemoteException e = (RemoteException) h.done().cause();
        assertEquals(StatusCode.CONNECTION_FAILED, e.status());
        assertTrue(e.getMessage().contains("during authentication as app:app-1"), e.getMessage());
        ch.finishAndReleaseAll();
    }
}
