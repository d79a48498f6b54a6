package io.estuary.network.server;

import io.estuary.common.status.StatusCode;
import io.estuary.network.auth.AuthFailure;

/**
 * What a server's transport tells about its traffic, for metrics: connections, each push with its size, time and
 * answer, each chunk served, and every failure answered (with the status the client gets). The transport calls it
 * at the one place each answer leaves, so handlers need no metrics code of their own.
 *
 * <p>Called on event-loop threads, and on whatever thread a handler answers from: implementations must be
 * thread-safe, cheap, and must never block or throw.
 */
public interface TransportObserver {
    /** Observes nothing. */
    TransportObserver NONE = new TransportObserver() {};

    default void connectionOpened() {}

    default void connectionClosed() {}

    /**
     * A push (plain or merged) of {@code bytes} was answered {@code nanos} after it arrived: {@link StatusCode#OK}
     * when it was accepted (also when the acknowledgement asks for a soft split), else the refusal's status.
     */
    default void pushAnswered(long bytes, long nanos, StatusCode status) {}

    /** A chunk of {@code bytes} was written to its reader {@code nanos} after the fetch request arrived. */
    default void chunkSent(long bytes, long nanos) {}

    /** A request other than a push (an RPC or a chunk fetch) was answered with a failure. */
    default void requestFailed(StatusCode status) {}

    /**
     * A connection failed the authentication handshake, for {@code reason}, and was closed (or refused before the
     * exchange: a protocol-5 peer while authentication is enforced).
     */
    default void authenticationFailed(AuthFailure reason) {}

    /** The permissive mode admitted a peer that proved nothing (anonymous, or protocol 5): unchecked. */
    default void admittedUnauthenticated() {}
}
