package io.estuary.network.protocol;

import static org.junit.jupiter.api.Assertions.*;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the decoder reports after each read (bytes held short of a frame, frames completed), and its own limit. */
class FrameDecoderProgressTest {
    private static ByteBuf frame(int bodyBytes) {
        ByteBuf b = Unpooled.buffer();
        b.writeInt(1 + bodyBytes);
        b.writeByte(MessageType.ONE_WAY.id());
        b.writeZero(bodyBytes);
        return b;
    }

    @Test
    void eachReadReportsWhatIsHeldAndHowManyFramesItCompleted() {
        List<long[]> reports = new ArrayList<>();
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(
                1 << 20,
                "test.maxFrame",
                1024,
                (change, held, frames) -> reports.add(new long[] {change, held, frames})));
        ByteBuf first = frame(1000);
        ByteBuf second = frame(500);
        ch.writeInbound(first.readRetainedSlice(600));
        ch.writeInbound(first.readRetainedSlice(300)); // still short of the first frame
        // the rest of the first frame, the whole second one and 10 bytes of a third, in one read
        ByteBuf rest = Unpooled.wrappedBuffer(
                first.retainedSlice(),
                second.retainedSlice(),
                Unpooled.wrappedBuffer(new byte[] {0, 0, 0, 20, MessageType.ONE_WAY.id(), 0, 0, 0, 0, 0}));
        ch.writeInbound(rest);
        first.release();
        second.release();
        assertArrayEquals(new long[] {600, 600, 0}, reports.get(0));
        assertArrayEquals(new long[] {300, 900, 0}, reports.get(1));
        assertArrayEquals(new long[] {-890, 10, 2}, reports.get(2), "two frames done, part of a third held");
        for (Object m; (m = ch.readInbound()) != null; ) ((Message) m).releaseBody();
        ch.finishAndReleaseAll();
        assertArrayEquals(new long[] {-10, 0, 0}, reports.get(reports.size() - 1), "a closed connection holds nothing");
    }

    @Test
    void aFrameOverTheServersOwnLimitIsRefusedNamingItsKey() {
        EmbeddedChannel ch =
                new EmbeddedChannel(new FrameDecoder(4096, "estuary.worker.push.maxUnfinishedBytes", 1024, null));
        ByteBuf big = Unpooled.buffer().writeInt(4097).writeByte(MessageType.PUSH_DATA.id());
        DecoderException e = assertThrows(DecoderException.class, () -> ch.writeInbound(big));
        assertTrue(e.getCause() instanceof ProtocolException, e.toString());
        assertTrue(
                e.getCause()
                        .getMessage()
                        .contains("frame of 4097 bytes exceeds " + "estuary.worker.push.maxUnfinishedBytes (4096)"),
                e.getCause().getMessage());
        ch.finishAndReleaseAll();
    }
}
