package io.estuary.worker.push;

import io.estuary.worker.storage.MemoryPressure;
import io.estuary.worker.storage.MemoryTracker;
import io.netty.channel.Channel;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Back-pressure on the push port: stops reading from connections while the worker's memory is under pressure and
 * resumes them when it is not, instead of refusing pushes it has already received. Clients' connections pause at
 * {@link MemoryPressure#PAUSE_PUSH}; connections that carry replicas from other workers only at
 * {@link MemoryPressure#PAUSE_ALL}. A paused client simply waits for its acknowledgements; its socket buffers fill
 * and TCP slows it down.
 *
 * <p>Thread-safe. Every connection is tracked from the moment it opens, so one opened during a pause starts paused
 * and resumes with the rest. A connection's reading is decided under its own lock from the current level, so the
 * last decision always reflects the newest level; {@link MemoryTracker#tick} repeats it regularly besides.
 */
public final class PushReadThrottle implements MemoryTracker.Listener {
  private final MemoryTracker memory;
  /** Open push-port connections: whether each carries replication. */
  private final Map<Channel, Boolean> channels = new ConcurrentHashMap<>();
  private final AtomicLong pausedReads = new AtomicLong();

  public PushReadThrottle(MemoryTracker memory) {
    this.memory = memory;
    memory.addListener(this);
  }

  public void opened(Channel ch) {
    channels.put(ch, Boolean.FALSE);
    apply(ch);
  }

  /** Marks a connection as carrying replicas (seen from the locations it pushes to). */
  public void carriesReplicas(Channel ch) {
    if (channels.replace(ch, Boolean.FALSE, Boolean.TRUE)) apply(ch);
  }

  public void closed(Channel ch) {
    channels.remove(ch);
  }

  @Override
  public void onPressure(MemoryPressure level) {
    for (Channel ch : channels.keySet()) apply(ch);
  }

  private void apply(Channel ch) {
    synchronized (ch) {
      Boolean replication = channels.get(ch);
      if (replication == null) return; // closed
      boolean read = memory.level().reads(replication);
      if (ch.config().isAutoRead() != read) {
        if (!read) pausedReads.incrementAndGet();
        ch.config().setAutoRead(read);
      }
    }
  }

  /** Open connections not being read now. */
  public int pausedConnections() {
    int n = 0;
    for (Channel ch : channels.keySet()) if (!ch.config().isAutoRead()) n++;
    return n;
  }

  /** How many times a connection was paused. */
  public long pausedReads() {
    return pausedReads.get();
  }

  public int connections() {
    return channels.size();
  }
}
