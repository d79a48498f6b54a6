package io.estuary.network.client;

import io.netty.buffer.ByteBuf;

/** Gets one fetched chunk, or why it failed. */
public interface ChunkReceivedCallback {
    /** The callee owns {@code chunk} and must release it. */
    void onSuccess(int chunkIndex, ByteBuf chunk);

    void onFailure(int chunkIndex, Throwable cause);
}
