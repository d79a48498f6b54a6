package io.estuary.network.server;

import io.estuary.common.status.StatusCode;
import io.netty.buffer.ByteBuf;

/** How a handler answers a request or a push, now or later from another thread. */
public interface ResponseCallback {
  /** {@code body} may be empty; ownership passes to the transport. */
  void onSuccess(ByteBuf body);

  /**
   * The status tells the client what to do; the message goes to the caller verbatim: make it say what was wrong
   * and what was asked.
   */
  void onFailure(StatusCode status, String error);
}
