package io.estuary.network.server;

import io.estuary.common.status.HasStatus;
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

    /**
     * The status a failed request answers with, from what its handler threw: the exception's own (a
     * {@link io.estuary.common.status.StatusException}, or a client's exception from a call the handler made: any
     * {@link HasStatus}),
     * {@link StatusCode#BAD_REQUEST} for bad arguments, else {@link StatusCode#FATAL}.
     */
    static StatusCode statusOf(Throwable e) {
        if (e instanceof java.util.concurrent.CompletionException && e.getCause() != null) e = e.getCause();
        return e instanceof IllegalArgumentException ? StatusCode.BAD_REQUEST : HasStatus.statusOf(e);
    }
}
