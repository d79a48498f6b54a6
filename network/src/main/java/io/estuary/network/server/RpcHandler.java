package io.estuary.network.server;

import io.estuary.common.status.StatusCode;
import io.estuary.network.protocol.PushData;
import io.estuary.network.protocol.PushMergedData;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;

/** What a server does with the messages it receives. Called on Netty threads: never block here. */
public interface RpcHandler {
    /** A request. {@code body} is valid only during the call. */
    void receive(Channel channel, ByteBuf body, ResponseCallback callback);

    /** A push. The handler owns {@code push.body()} and must release it. */
    default void receivePush(Channel channel, PushData push, ResponseCallback callback) {
        push.body().release();
        callback.onFailure(StatusCode.BAD_REQUEST, "this server does not accept pushed data");
    }

    default void receivePushMerged(Channel channel, PushMergedData push, ResponseCallback callback) {
        push.body().release();
        callback.onFailure(StatusCode.BAD_REQUEST, "this server does not accept pushed data");
    }

    /** A message that expects no answer. {@code body} is valid only during the call. */
    default void receiveOneWay(Channel channel, ByteBuf body) {}

    /** Serves chunk fetches, or null when this server serves none. */
    default StreamManager streamManager() {
        return null;
    }

    /**
     * Told each change in the bytes this server holds for a connection short of a whole frame (receive buffers), to
     * count them against a memory bound; null when not counted. Called on network threads: must be quick.
     */
    default java.util.function.LongConsumer receiveBufferChanges() {
        return null;
    }

    /**
     * What this server tells the frame decoder of {@code channel} to report after every read (bytes held short of a
     * whole frame, frames completed), or null. By default the changes go to {@link #receiveBufferChanges()}.
     */
    default io.estuary.network.protocol.FrameDecoder.Progress receiveProgress(Channel channel) {
        java.util.function.LongConsumer changes = receiveBufferChanges();
        if (changes == null) return null;
        return (change, held, frames) -> {
            if (change != 0) changes.accept(change);
        };
    }

    /**
     * The largest frame this server takes, when it takes less than {@code estuary.network.maxFrameSize} (what one
     * connection may hold unfinished), or null. A larger frame is refused and its connection closed.
     */
    default FrameLimit frameLimit() {
        return null;
    }

    /** A server's own bound on frames, and the configuration key that sets it. Immutable. */
    final class FrameLimit {
        public final long bytes;
        public final String key;

        public FrameLimit(long bytes, String key) {
            this.bytes = bytes;
            this.key = key;
        }
    }

    /** A connection opened. */
    default void channelActive(Channel channel) {}

    default void channelInactive(Channel channel) {}
}
