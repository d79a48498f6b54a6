package io.estuary.network.protocol;

import static org.junit.jupiter.api.Assertions.*;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The decoder reports the bytes it holds short of a whole frame, and gives them all back when the channel goes. */
class FrameDecoderHeldBytesTest {
    /** A one-way frame: length, type, body. */
    private static ByteBuf frame(int bodyBytes) {
        ByteBuf b = Unpooled.buffer();
        b.writeInt(1 + bodyBytes);
        b.writeByte(MessageType.ONE_WAY.id());
        b.writeZero(bodyBytes);
        return b;
    }

    @Test
    void partialFramesAreHeldUntilWholeAndReleasedOnClose() {
        AtomicLong held = new AtomicLong();
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(1 << 20, 1024, held::addAndGet));
        ByteBuf first = frame(1000);
        ByteBuf second = frame(3000);
        ch.writeInbound(first.readRetainedSlice(600));
        assertEquals(600, held.get(), "part of a frame is held");
        ch.writeInbound(first.readRetainedSlice(first.readableBytes()));
        first.release();
        assertEquals(0, held.get(), "a whole frame is handed on");
        ch.writeInbound(second.readRetainedSlice(2000));
        assertEquals(2000, held.get());
        Message m = ch.readInbound();
        assertEquals(MessageType.ONE_WAY, m.type());
        m.releaseBody();
        ch.finishAndReleaseAll();
        second.release();
        assertEquals(0, held.get(), "a closed connection holds nothing");
    }

    /** What a stalled connection's log line says: bytes and frames so far, and the held frame's length and type. */
    @Test
    void describesWhatItHolds() {
        FrameDecoder decoder = new FrameDecoder(1 << 20);
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        ByteBuf first = frame(10);
        ByteBuf second = frame(300);
        ch.writeInbound(first);
        assertEquals("15 bytes received, 1 frames decoded, nothing held", decoder.describe());
        ch.writeInbound(second.readRetainedSlice(105));
        second.release();
        assertEquals(
                "120 bytes received, 1 frames decoded, 105 bytes held of a frame declaring 301 (ONE_WAY), starting "
                        + "0000012d" + String.format("%02x", MessageType.ONE_WAY.id())
                        + String.join("", java.util.Collections.nCopies(59, "00")),
                decoder.describe());
        ((Message) ch.readInbound()).releaseBody();
        ch.finishAndReleaseAll();
    }
}
