package io.estuary.worker.push;

import io.estuary.network.protocol.FrameDecoder;
import io.estuary.network.protocol.Message;
import io.estuary.network.protocol.MessageEncoder;
import io.estuary.network.server.RpcHandler;
import io.estuary.network.server.TransportObserver;
import io.estuary.network.server.TransportServer;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.embedded.EmbeddedChannel;

/**
 * One push-port connection on an {@link EmbeddedChannel}: the server's real pipeline (encoder, frame decoder,
 * request handler) in front of a handler, with a client-side encoder and decoder, so messages go through the wire
 * format both ways. Not thread-safe (one test thread).
 */
final class EmbeddedPushPort implements AutoCloseable {
    static final long MAX_FRAME = 64L << 20;

    final EmbeddedChannel server;
    private final EmbeddedChannel encoder = new EmbeddedChannel(MessageEncoder.INSTANCE);
    private final EmbeddedChannel decoder = new EmbeddedChannel(new FrameDecoder(MAX_FRAME));

    EmbeddedPushPort(RpcHandler handler) {
        // Handlers given to the constructor are in place before the channel becomes active, as on a real connection.
        this.server = new EmbeddedChannel(new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
                TransportServer.initPipeline(ch.pipeline(), MAX_FRAME, "test-push", handler, TransportObserver.NONE);
            }
        });
    }

    /** Encodes {@code m} as a client would and hands the bytes to the server. */
    void send(Message m) {
        encoder.writeOutbound(m);
        for (Object o; (o = encoder.readOutbound()) != null; ) server.writeInbound(o);
    }

    /** Hands raw bytes to the server, e.g. a malformed frame. */
    void sendRaw(ByteBuf bytes) {
        server.writeInbound(bytes);
    }

    /** The server's next answer, decoded, or null when there is none (yet). The caller releases its body. */
    Message reply() {
        server.runPendingTasks();
        for (Object o; (o = server.readOutbound()) != null; ) decoder.writeInbound(o);
        return decoder.readInbound();
    }

    @Override
    public void close() {
        server.finishAndReleaseAll();
        encoder.finishAndReleaseAll();
        decoder.finishAndReleaseAll();
    }
}
