package io.estuary.network.server;

import io.estuary.network.buffer.ManagedBuffer;

/** Serves chunks of streams opened through an RPC. */
public interface StreamManager {
  /** The chunk's bytes; throws with a clear message for an unknown stream or index. */
  ManagedBuffer getChunk(long streamId, int chunkIndex);
}
