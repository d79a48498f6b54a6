package io.estuary.network.protocol;

import io.estuary.network.buffer.ManagedBuffer;
import io.netty.buffer.ByteBuf;

/**
 * One frame: {@code [int length][byte type][header][body]}, where length counts every byte after itself. The header
 * is fixed by the type; the body is whatever remains (raw data or a protobuf control message).
 */
public interface Message {
    MessageType type();

    /** Bytes {@link #encodeHeader} writes. */
    int headerLength();

    void encodeHeader(ByteBuf out);

    /** The body, or null for a header-only message. */
    ManagedBuffer body();

    /**
     * Releases the body once, however often it is called: the encoder calls it after handing the body to Netty,
     * and a sender calls it when the write failed before reaching the encoder.
     */
    default void releaseBody() {}
}
