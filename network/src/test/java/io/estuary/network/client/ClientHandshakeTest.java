package io.estuary.network.client;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.status.StatusCode;
import io.estuary.network.protocol.Handshake;
import io.estuary.network.protocol.ProtocolRange;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/** The client's side of the negotiation on a real pipeline, against each kind of answer a server can give. */
class ClientHandshakeTest {
    private static final ProtocolRange SPEAKS = new ProtocolRange(5, 6);

    private static ByteBuf answer(int version, byte outcome) {
        ByteBuf b = Unpooled.buffer();
        Handshake.writeAnswer(b, new Handshake.Answer(version, outcome));
        return b;
    }

    private static EmbeddedChannel connect(ClientHandshake h, int expectedHello) {
        EmbeddedChannel ch = new EmbeddedChannel(h, new ChannelInboundHandlerAdapter());
        ByteBuf hello = ch.readOutbound();
        assertEquals(Handshake.HELLO_SIZE, hello.readableBytes(), "the hello keeps release 0.1.0's layout");
        assertEquals(Handshake.MAGIC, hello.readInt());
        assertEquals(expectedHello, hello.readInt());
        hello.release();
        return ch;
    }

    @Test
    void theHelloNamesTheNewestVersionAndAnAcceptanceAgreesOnIt() {
        ClientHandshake h = new ClientHandshake("srv", SPEAKS, 6);
        EmbeddedChannel ch = connect(h, 6);
        ch.writeInbound(answer(6, Handshake.ACCEPTED));
        ByteBuf authHello = ch.readOutbound(); // protocol 6: anonymous, then the server admits it
        assertEquals(2 + 32, authHello.readableBytes());
        authHello.release();
        ch.writeInbound(Unpooled.buffer().writeByte(1));
        assertEquals(6, h.done().getNow());
        assertNull(ch.pipeline().get(ClientHandshake.class));
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void anOlderServersNewestIsTakenWhenSpoken() {
        ClientHandshake h = new ClientHandshake("srv", SPEAKS, 6);
        EmbeddedChannel ch = connect(h, 6);
        ch.writeInbound(answer(5, Handshake.ACCEPTED_AT));
        assertEquals(5, h.done().getNow());
        assertTrue(ch.isOpen());
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void aRelease1RefusalOfferingAVersionWeSpeakAsksForOneRetry() {
        ClientHandshake h = new ClientHandshake("srv", SPEAKS, 6);
        EmbeddedChannel ch = connect(h, 6);
        ch.writeInbound(answer(5, Handshake.REFUSED));
        RemoteException e = (RemoteException) h.done().cause();
        assertEquals(StatusCode.VERSION_MISMATCH, e.status());
        assertEquals(5, h.retryVersion());
        assertFalse(ch.isOpen());
        ch.finishAndReleaseAll();
    }

    @Test
    void aVersionWeDoNotSpeakFailsNamingBoth() {
        ClientHandshake h = new ClientHandshake("srv", SPEAKS, 6);
        EmbeddedChannel ch = connect(h, 6);
        ch.writeInbound(answer(4, Handshake.ACCEPTED_AT));
        RemoteException e = (RemoteException) h.done().cause();
        assertEquals(StatusCode.VERSION_MISMATCH, e.status());
        assertTrue(
                e.getMessage().contains("protocols 5 to 6") && e.getMessage().contains("protocol 4"), e.getMessage());
        assertEquals(-1, h.retryVersion());
        assertFalse(ch.isOpen());
        ch.finishAndReleaseAll();
    }
}
