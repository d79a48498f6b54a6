package io.estuary.network.server;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.network.protocol.Handshake;
import io.estuary.network.protocol.ProtocolRange;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/** The server's side of the negotiation on a real pipeline: the answer's bytes, the recorded version, what follows. */
class ServerHandshakeTest {
    private static final ProtocolRange SPEAKS = new ProtocolRange(5, 6);

    private static EmbeddedChannel channel() {
        return new EmbeddedChannel(new ServerHandshake("test", SPEAKS), new ChannelInboundHandlerAdapter());
    }

    private static ByteBuf hello(int version) {
        ByteBuf b = Unpooled.buffer();
        Handshake.writeHello(b, version);
        return b;
    }

    /** Reads the 9 answer bytes: {version, outcome}. */
    private static int[] answer(EmbeddedChannel ch) {
        ByteBuf a = ch.readOutbound();
        try {
            assertEquals(Handshake.ANSWER_SIZE, a.readableBytes(), "the answer keeps release 0.1.0's layout");
            assertEquals(Handshake.MAGIC, a.readInt());
            return new int[] {a.readInt(), a.readByte()};
        } finally {
            a.release();
        }
    }

    @Test
    void aHelloInTheRangeIsAcceptedAsIsAndFramesFollow() {
        for (int v : new int[] {5, 6}) {
            EmbeddedChannel ch = channel();
            ByteBuf in = hello(v);
            if (v >= 6) in.writeShort(0).writeZero(32); // protocol 6: an anonymous AUTH_HELLO
            in.writeInt(42); // the first frame's bytes in the same read
            ch.writeInbound(in);
            assertArrayEquals(new int[] {v, Handshake.ACCEPTED}, answer(ch));
            if (v >= 6) {
                ByteBuf admitted = ch.readOutbound();
                assertEquals(1, admitted.readableBytes());
                assertEquals(1, admitted.readByte(), "authentication off admits without proof");
                admitted.release();
            }
            assertEquals(v, ch.attr(Handshake.AGREED_VERSION).get());
            assertNull(ch.pipeline().get(ServerHandshake.class), "the handshake leaves the pipeline");
            ByteBuf rest = ch.readInbound();
            assertEquals(42, rest.readInt(), "bytes after the hello go on to the frame decoder");
            rest.release();
            assertTrue(ch.isOpen());
            assertFalse(ch.finishAndReleaseAll());
        }
    }

    @Test
    void aNewerHelloIsAnsweredWithTheServersNewest() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(hello(9));
        assertArrayEquals(new int[] {6, Handshake.ACCEPTED_AT}, answer(ch));
        assertEquals(6, ch.attr(Handshake.AGREED_VERSION).get());
        assertTrue(ch.isOpen());
        assertFalse(ch.finishAndReleaseAll());
    }

    @Test
    void anOlderHelloIsRefusedWithTheServersNewestAndClosed() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(hello(4).writeLong(7)); // bytes after a refused hello are dropped, never read as a frame
        assertArrayEquals(new int[] {6, Handshake.REFUSED}, answer(ch));
        assertNull(ch.attr(Handshake.AGREED_VERSION).get());
        assertFalse(ch.isOpen());
        assertNull(ch.readInbound());
        ch.finishAndReleaseAll();
    }
}
