package io.estuary.network.protocol;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.network.buffer.NettyManagedBuffer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import org.junit.jupiter.api.Test;

/**
 * A merged push may carry {@link PushMergedData#MAX_ENTRIES} partitions: a frame at the cap decodes, one just past
 * it is refused before its entries are read (the frame size alone would allow about eleven million), and the
 * decoder releases every byte it was given either way.
 */
class PushMergedDataCapTest {

    /** The frame a client sends: a merged push of {@code entries} one-byte batches. */
    private static ByteBuf frame(int entries) {
        int[] ids = new int[entries];
        int[] epochs = new int[entries];
        int[] offsets = new int[entries];
        for (int i = 0; i < entries; i++) {
            ids[i] = i;
            offsets[i] = i;
        }
        PushMergedData m = new PushMergedData(
                7, "app-1", ids, epochs, offsets, new NettyManagedBuffer(Unpooled.wrappedBuffer(new byte[entries])));
        ByteBuf out = Unpooled.buffer();
        out.writeInt(1 + m.headerLength() + entries);
        out.writeByte(m.type().id());
        m.encodeHeader(out);
        out.writeZero(entries);
        m.releaseBody();
        return out;
    }

    @Test
    void aMergedPushAtTheCapDecodes() {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(128L << 20, 1024));
        ByteBuf in = frame(PushMergedData.MAX_ENTRIES);
        ch.writeInbound(in);
        PushMergedData m = ch.readInbound();
        assertEquals(PushMergedData.MAX_ENTRIES, m.partitionIds.length);
        assertEquals(PushMergedData.MAX_ENTRIES - 1, m.offsets[PushMergedData.MAX_ENTRIES - 1]);
        m.releaseBody();
        assertFalse(ch.finishAndReleaseAll());
        assertEquals(0, in.refCnt(), "the frame's bytes are all released");
    }

    @Test
    void oneEntryPastTheCapIsRefusedBeforeItsEntriesAreRead() {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(128L << 20, 1024));
        ByteBuf in = frame(PushMergedData.MAX_ENTRIES + 1);
        DecoderException e = assertThrows(DecoderException.class, () -> ch.writeInbound(in));
        assertInstanceOf(ProtocolException.class, e.getCause());
        assertTrue(
                e.getCause()
                        .getMessage()
                        .contains((PushMergedData.MAX_ENTRIES + 1) + " partitions: a merged push " + "carries at most "
                                + PushMergedData.MAX_ENTRIES),
                e.getCause().getMessage());
        assertNull(ch.readInbound(), "nothing is handed on");
        ch.finishAndReleaseAll();
        assertEquals(0, in.refCnt(), "the refused frame's bytes are released");
    }
}
