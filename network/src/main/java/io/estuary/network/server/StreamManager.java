package io.estuary.network.server;

import io.estuary.network.buffer.ManagedBuffer;

/** Serves chunks of streams opened through an RPC. */
public interface StreamManager {
  /** The chunk's bytes; throws with a clear message for an unknown stream or index. */
  ManagedBuffer getChunk(long streamId, int chunkIndex);

  /** Called once a chunk from {@link #getChunk} has been written out (or failed), {@code nanos} after it was asked. */
  default void chunkSent(long streamId, int chunkIndex, long nanos, boolean success) {}
}
