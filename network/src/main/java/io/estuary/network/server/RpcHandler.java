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

  /** A connection opened. */
  default void channelActive(Channel channel) {}

  default void channelInactive(Channel channel) {}
}
