package io.estuary.worker.fetch;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.status.StatusCode;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.protocol.ChunkFetchFailure;
import io.estuary.network.protocol.ChunkFetchRequest;
import io.estuary.network.protocol.ChunkFetchSuccess;
import io.estuary.network.protocol.FrameDecoder;
import io.estuary.network.protocol.Message;
import io.estuary.network.protocol.MessageEncoder;
import io.estuary.network.protocol.StreamClose;
import io.estuary.network.server.ResponseCallback;
import io.estuary.network.server.RpcHandler;
import io.estuary.network.server.StreamManager;
import io.estuary.network.server.TransportObserver;
import io.estuary.network.server.TransportServer;
import io.estuary.worker.storage.CommittedFile;
import io.estuary.worker.storage.MemoryTracker;
import io.estuary.worker.storage.PartitionCache;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.FileRegion;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.File;
import java.nio.channels.Channels;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A reader's {@link StreamClose} on the fetch port's real pipeline (encoder, frame decoder, request handler) on an
 * {@link EmbeddedChannel}: the stream is dropped at once and gives its place on the connection back, a later chunk
 * of it is refused with {@code UNKNOWN_STREAM}, a close from another connection or for an unknown stream changes
 * nothing, and no buffer is left referenced (the chunks come from the small-partition cache; its entry ends with the
 * cache's own reference alone).
 */
class StreamCloseTest {
    private static final long MAX_FRAME = 1 << 20;

    /** One fetch connection: the server's pipeline, and a client-side encoder and decoder. */
    private static final class Port implements AutoCloseable {
        final EmbeddedChannel server;
        private final EmbeddedChannel encoder = new EmbeddedChannel(MessageEncoder.INSTANCE);
        private final EmbeddedChannel decoder = new EmbeddedChannel(new FrameDecoder(MAX_FRAME));

        Port(RpcHandler handler) {
            server = new EmbeddedChannel(new ChannelInitializer<Channel>() {
                @Override
                protected void initChannel(Channel ch) {
                    TransportServer.initPipeline(
                            ch.pipeline(), MAX_FRAME, "test-fetch", handler, TransportObserver.NONE);
                }
            });
        }

        void send(Message m) {
            encoder.writeOutbound(m);
            for (Object o; (o = encoder.readOutbound()) != null; ) server.writeInbound(o);
        }

        /** The server's next answer, decoded, or null; a file region sent from disk is read into bytes here. */
        Message reply() throws Exception {
            server.runPendingTasks();
            for (Object o; (o = server.readOutbound()) != null; ) {
                if (o instanceof FileRegion) {
                    FileRegion r = (FileRegion) o;
                    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
                    while (r.transferred() < r.count()) r.transferTo(Channels.newChannel(out), r.transferred());
                    r.release();
                    o = Unpooled.wrappedBuffer(out.toByteArray());
                }
                decoder.writeInbound(o);
            }
            return decoder.readInbound();
        }

        @Override
        public void close() {
            assertFalse(server.finishAndReleaseAll(), "nothing left unread on the server side");
            encoder.finishAndReleaseAll();
            decoder.finishAndReleaseAll();
        }
    }

    /** Serves chunks only; opens happen on the registry directly, for this port's channel. */
    private static RpcHandler serving(StreamManager streams) {
        return new RpcHandler() {
            @Override
            public void receive(Channel channel, ByteBuf body, ResponseCallback callback) {
                callback.onFailure(StatusCode.BAD_REQUEST, "no requests here");
            }

            @Override
            public StreamManager streamManager() {
                return streams;
            }

            @Override
            public void channelInactive(Channel channel) {
                ((StreamRegistry) streams).closeStreamsOf(channel);
            }
        };
    }

    private static byte[] chunk(Message m) {
        assertTrue(m instanceof ChunkFetchSuccess, "a chunk, not " + m);
        ByteBuf b = ((NettyManagedBuffer) m.body()).buf();
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        assertTrue(b.release(), "the reader held the one reference");
        return out;
    }

    @Test
    void aClosedStreamIsDroppedAtOnceAndGivesItsPlaceBack() throws Exception {
        File f = Files.createTempFile("part", ".data").toFile();
        byte[] data = new byte[300];
        new Random(5).nextBytes(data);
        Files.write(f.toPath(), data);
        CommittedFile file = new CommittedFile(f, new long[] {0, 100, 200}, 300, null);
        MemoryTracker memory = new MemoryTracker(1 << 20);
        PartitionCache cache = new PartitionCache(memory, true, 1 << 20, 1 << 20);
        assertTrue(cache.startFill("s", file) && cache.fill(file));
        StreamRegistry streams = new StreamRegistry(cache, 2);
        ByteBuf root;
        try (Port reader = new Port(serving(streams));
                Port other = new Port(serving(streams))) {
            long a = streams.open(file, reader.server);
            long b = streams.open(file, reader.server);
            assertEquals(
                    StatusCode.RETRY_LATER,
                    assertThrows(
                                    io.estuary.common.status.StatusException.class,
                                    () -> streams.open(file, reader.server))
                            .status(),
                    "the connection holds the most it may");

            reader.send(new ChunkFetchRequest(a, 0));
            assertArrayEquals(Arrays.copyOfRange(data, 0, 100), chunk(reader.reply()));
            ByteBuf probe = cache.slice(file, 0, 1); // the cache's entry, to count its references at the end
            root = probe;
            while (root.unwrap() != null) root = root.unwrap(); // through leak-detection wrappers and derived buffers
            probe.release();

            // Another connection cannot close this reader's stream; an unknown stream's close is ignored.
            other.send(new StreamClose(a));
            other.send(new StreamClose(424242));
            assertNull(other.reply(), "a close has no answer");
            assertEquals(2, streams.openStreams());

            // The reader stops early (a limit): closing gives the place back at once, not after the stream timeout.
            reader.send(new StreamClose(a));
            assertNull(reader.reply(), "a close has no answer");
            assertEquals(1, streams.openStreams());
            long c = streams.open(file, reader.server);

            reader.send(new ChunkFetchRequest(a, 1));
            Message refused = reader.reply();
            assertTrue(refused instanceof ChunkFetchFailure, "refused, not " + refused);
            assertEquals(StatusCode.UNKNOWN_STREAM, ((ChunkFetchFailure) refused).status);
            assertTrue(
                    ((ChunkFetchFailure) refused).error.contains("unknown stream " + a),
                    ((ChunkFetchFailure) refused).error);

            // The other streams serve on, whole.
            reader.send(new ChunkFetchRequest(c, 2));
            assertArrayEquals(Arrays.copyOfRange(data, 200, 300), chunk(reader.reply()));
            reader.send(new ChunkFetchRequest(b, 1));
            assertArrayEquals(Arrays.copyOfRange(data, 100, 200), chunk(reader.reply()));
            assertTrue(reader.server.isActive(), "the connection stays open");
            reader.send(new StreamClose(b));
            assertEquals(0, streams.openStreams(), "c ended with its last chunk, b was closed");
        }
        assertEquals(1, root.refCnt(), "only the cache holds the entry");
        cache.close();
        assertEquals(0, root.refCnt());
        assertEquals(0, memory.held());
    }

    @Test
    void aStreamServedFromDiskClosesItsFileAndLaterChunksAreRefusedAsUnknown() throws Exception {
        File f = Files.createTempFile("part", ".data").toFile();
        byte[] data = new byte[300];
        new Random(6).nextBytes(data);
        Files.write(f.toPath(), data);
        CommittedFile file = new CommittedFile(f, new long[] {0, 100, 200}, 300, null);
        StreamRegistry streams = new StreamRegistry(1000);
        try (Port reader = new Port(serving(streams))) {
            long a = streams.open(file, reader.server);
            reader.send(new ChunkFetchRequest(a, 1));
            assertArrayEquals(Arrays.copyOfRange(data, 100, 200), chunk(reader.reply()));
            reader.send(new StreamClose(a));
            assertEquals(0, streams.openStreams());
            reader.send(new ChunkFetchRequest(a, 2));
            Message refused = reader.reply();
            assertEquals(StatusCode.UNKNOWN_STREAM, ((ChunkFetchFailure) refused).status);
        }
    }
}
