package io.estuary.network.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.protocol.MessageEncoder;
import io.estuary.network.protocol.PushData;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An answer the connection cannot write (here the socket's copy fails the way a JVM out of direct memory fails it)
 * closes the connection, so the client fails its requests at once instead of waiting out its timeout for an answer
 * that is never coming. Answers that are written keep the connection open.
 */
class UnwritableAnswerTest {
    private final List<ResponseCallback> held = new ArrayList<>();
    private boolean failWrites;

    private final RpcHandler handler = new RpcHandler() {
        @Override
        public void receive(Channel channel, ByteBuf body, ResponseCallback callback) {
            callback.onSuccess(null);
        }

        @Override
        public void receivePush(Channel channel, PushData push, ResponseCallback callback) {
            push.body().release();
            held.add(callback);
        }
    };

    /** Next to the socket: fails every write while {@code failWrites} is set, as a refused direct copy does. */
    private final ChannelOutboundHandlerAdapter socket = new ChannelOutboundHandlerAdapter() {
        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
            if (failWrites) {
                ReferenceCountUtil.release(msg);
                promise.setFailure(new OutOfMemoryError("Cannot reserve 4194304 bytes of direct buffer memory"));
                return;
            }
            super.write(ctx, msg, promise);
        }
    };

    private final EmbeddedChannel server = new EmbeddedChannel(new ChannelInitializer<Channel>() {
        @Override
        protected void initChannel(Channel ch) {
            TransportServer.initPipeline(ch.pipeline(), 1 << 20, "answer-test", handler, TransportObserver.NONE);
            ch.pipeline().addFirst("socket", socket);
        }
    });

    private void push(long id) {
        EmbeddedChannel encoder = new EmbeddedChannel(MessageEncoder.INSTANCE);
        encoder.writeOutbound(
                new PushData(id, "app-1-0", 3, 0, new NettyManagedBuffer(Unpooled.wrappedBuffer(new byte[10]))));
        for (Object o; (o = encoder.readOutbound()) != null; ) server.writeInbound(o);
        encoder.finishAndReleaseAll();
    }

    @Test
    void anAnswerThatCannotBeWrittenClosesTheConnection() {
        push(1);
        push(2);
        assertEquals(2, held.size());
        assertEquals(2, TransportServer.unansweredRequests(server));

        held.get(0).onSuccess(null);
        server.runPendingTasks();
        assertTrue(server.isActive(), "a written answer keeps the connection");
        assertEquals(1, TransportServer.unansweredRequests(server));

        failWrites = true;
        held.get(1).onSuccess(null);
        server.runPendingTasks();
        assertFalse(server.isActive(), "the client must not wait its timeout out for an answer never sent");
        server.finishAndReleaseAll();
    }
}
