package io.estuary.network.server;

import io.estuary.network.buffer.ManagedBuffer;
import io.netty.channel.Channel;
import java.util.concurrent.CompletableFuture;

/** Serves chunks of streams opened through an RPC. */
public interface StreamManager {
    /** The chunk's bytes; throws with a clear message for an unknown stream or index. */
    ManagedBuffer getChunk(long streamId, int chunkIndex);

    /**
     * The chunk's bytes, once ready: what the transport calls, on a network thread. A manager whose chunks need file
     * I/O to open does it on threads of its own and completes later; this default opens on the caller's thread. May
     * throw (or complete exceptionally) with a clear message for an unknown stream or index.
     */
    default CompletableFuture<ManagedBuffer> getChunkAsync(long streamId, int chunkIndex) {
        return CompletableFuture.completedFuture(getChunk(streamId, chunkIndex));
    }

    /**
     * The chunk, asked for by the reader on {@code channel}: what the transport calls. A manager that checks who may
     * read a stream does it here (and refuses by throwing or failing the future); this default does not.
     */
    default CompletableFuture<ManagedBuffer> getChunkAsync(Channel channel, long streamId, int chunkIndex) {
        return getChunkAsync(streamId, chunkIndex);
    }

    /** Called once a chunk from {@link #getChunk} has been written out (or failed), {@code nanos} after it was asked. */
    default void chunkSent(long streamId, int chunkIndex, long nanos, boolean success) {}

    /**
     * The reader on {@code channel} is done with the stream: drop it, if it is that connection's (a stream of another
     * connection, or an unknown one, is left alone). Called on a network thread: must not block.
     */
    default void closeStream(Channel channel, long streamId) {}
}
