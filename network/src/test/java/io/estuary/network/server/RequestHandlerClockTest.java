package io.estuary.network.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.estuary.common.status.StatusCode;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.protocol.FrameDecoder;
import io.estuary.network.protocol.Message;
import io.estuary.network.protocol.MessageEncoder;
import io.estuary.network.protocol.PushData;
import io.estuary.testing.ManualClock;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.embedded.EmbeddedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A server connection times each push from its arrival to its answer on the server's {@link
 * io.estuary.common.time.Clock}: driven here by a manual clock on the real pipeline, so the observer sees exactly the
 * time the test let pass, for answers and refusals alike.
 */
class RequestHandlerClockTest {
    private final ManualClock clock = new ManualClock();
    private final List<ResponseCallback> held = new ArrayList<>();
    private final List<long[]> answered = new ArrayList<>();
    private final List<StatusCode> statuses = new ArrayList<>();
    private final EmbeddedChannel encoder = new EmbeddedChannel(MessageEncoder.INSTANCE);
    private final EmbeddedChannel decoder = new EmbeddedChannel(new FrameDecoder(1 << 20));

    private final RpcHandler handler = new RpcHandler() {
        @Override
        public void receive(Channel channel, ByteBuf body, ResponseCallback callback) {
            callback.onFailure(StatusCode.BAD_REQUEST, "no requests here");
        }

        @Override
        public void receivePush(Channel channel, PushData push, ResponseCallback callback) {
            push.body().release();
            held.add(callback); // answered when the test says so
        }
    };

    private final TransportObserver observer = new TransportObserver() {
        @Override
        public void pushAnswered(long bytes, long nanos, StatusCode status) {
            answered.add(new long[] {bytes, nanos});
            statuses.add(status);
        }
    };

    private final EmbeddedChannel server = new EmbeddedChannel(new ChannelInitializer<Channel>() {
        @Override
        protected void initChannel(Channel ch) {
            TransportServer.initPipeline(ch.pipeline(), 1 << 20, "clock-test", handler, observer, clock);
        }
    });

    @AfterEach
    void close() {
        assertFalse(server.finishAndReleaseAll(), "no answer left unread");
        encoder.finishAndReleaseAll();
        decoder.finishAndReleaseAll();
    }

    private void push(long id, int bytes) {
        encoder.writeOutbound(
                new PushData(id, "app-1-0", 3, 0, new NettyManagedBuffer(Unpooled.wrappedBuffer(new byte[bytes]))));
        for (Object o; (o = encoder.readOutbound()) != null; ) server.writeInbound(o);
    }

    private Message reply() {
        server.runPendingTasks();
        for (Object o; (o = server.readOutbound()) != null; ) decoder.writeInbound(o);
        return decoder.readInbound();
    }

    @Test
    void aPushIsTimedFromArrivalToAnswerOnTheServersClock() {
        push(1, 100);
        push(2, 50);
        clock.advance(Duration.ofMillis(250));
        held.get(0).onSuccess(null);
        clock.advance(Duration.ofSeconds(2));
        held.get(1).onFailure(StatusCode.RETRY_LATER, "busy");

        assertEquals(2, answered.size());
        assertEquals(100, answered.get(0)[0]);
        assertEquals(Duration.ofMillis(250).toNanos(), answered.get(0)[1], "the first push waited 250 ms");
        assertEquals(StatusCode.OK, statuses.get(0));
        assertEquals(50, answered.get(1)[0]);
        assertEquals(Duration.ofMillis(2250).toNanos(), answered.get(1)[1], "the refused one 2.25 s");
        assertEquals(StatusCode.RETRY_LATER, statuses.get(1));
        for (int i = 0; i < 2; i++) {
            Message m = reply();
            assertNotNull(m, "answer " + i);
            if (m.body() != null) m.body().release();
        }
        assertNull(reply());
    }

    @Test
    void noTimePassedIsZero() {
        push(1, 10);
        held.get(0).onSuccess(null);
        assertEquals(0, answered.get(0)[1]);
        Message m = reply();
        if (m.body() != null) m.body().release();
    }
}
