package io.estuary.worker.fetch;

import io.estuary.network.buffer.FileSegmentManagedBuffer;
import io.estuary.network.buffer.ManagedBuffer;
import io.estuary.network.server.StreamManager;
import io.estuary.worker.storage.CommittedFile;
import io.netty.channel.Channel;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Streams opened by readers: each is a committed file read chunk by chunk. A stream is dropped once its last chunk
 * is served or its connection closes.
 */
public final class StreamRegistry implements StreamManager {
  /** A stream without a fetch for this long is dropped (its reader stopped early or died). */
  static final long IDLE_MS = 10 * 60 * 1000L;

  private static final class OpenStream {
    final CommittedFile file;
    final Channel channel;
    volatile long lastUsedMs = System.currentTimeMillis();

    OpenStream(CommittedFile file, Channel channel) {
      this.file = file;
      this.channel = channel;
    }
  }

  private final AtomicLong nextId = new AtomicLong(System.nanoTime() & 0x7fffffffL);
  private final Map<Long, OpenStream> streams = new ConcurrentHashMap<>();
  /** Chunks handed to the transport and not yet sent: their disk, for the fetch latency it reports. */
  private final Map<String, io.estuary.worker.storage.Disk> sending = new ConcurrentHashMap<>();

  public long open(CommittedFile file, Channel channel) {
    long id = nextId.incrementAndGet();
    streams.put(id, new OpenStream(file, channel));
    return id;
  }

  @Override
  public ManagedBuffer getChunk(long streamId, int chunkIndex) {
    OpenStream s = streams.get(streamId);
    if (s == null) throw new IllegalArgumentException("unknown stream " + streamId + " (never opened, or finished)");
    if (chunkIndex < 0 || chunkIndex >= s.file.numChunks()) {
      throw new IllegalArgumentException("stream " + streamId + " has " + s.file.numChunks() + " chunks; "
          + "chunk " + chunkIndex + " does not exist");
    }
    s.lastUsedMs = System.currentTimeMillis();
    if (chunkIndex == s.file.numChunks() - 1) streams.remove(streamId);
    if (s.file.disk() != null) sending.put(streamId + "/" + chunkIndex, s.file.disk());
    try {
      return new FileSegmentManagedBuffer(s.file.file(), s.file.chunkOffset(chunkIndex), s.file.chunkLength(chunkIndex))
          .open();
    } catch (java.io.IOException e) {
      sending.remove(streamId + "/" + chunkIndex);
      streams.remove(streamId);
      throw new IllegalStateException("chunk " + chunkIndex + " of stream " + streamId + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void chunkSent(long streamId, int chunkIndex, long nanos, boolean success) {
    io.estuary.worker.storage.Disk d = sending.remove(streamId + "/" + chunkIndex);
    if (d != null && success) d.recordFetch(nanos);
  }

  /** Drops streams idle since {@code nowMs - idleMs}; returns how many. */
  public int dropIdle(long nowMs, long idleMs) {
    int before = streams.size();
    streams.values().removeIf(s -> nowMs - s.lastUsedMs > idleMs);
    return before - streams.size();
  }

  public void closeStreamsOf(Channel channel) {
    streams.values().removeIf(s -> s.channel == channel);
  }

  public int openStreams() {
    return streams.size();
  }
}
