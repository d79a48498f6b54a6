package io.estuary.worker.storage;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Pushed bytes held in memory until flushed. Above the limit, pushes are refused with a retryable error, so
 * writers slow down instead of the worker running out of memory. Counts bytes actually held, not what Netty's
 * pools have reserved, so the worker resumes as soon as flushes free memory.
 */
public final class MemoryTracker {
  private final long limit;
  private final AtomicLong held = new AtomicLong();

  public MemoryTracker(long limit) {
    this.limit = limit;
  }

  public boolean overLimit() {
    return held.get() >= limit;
  }

  public void add(long bytes) {
    held.addAndGet(bytes);
  }

  public void release(long bytes) {
    held.addAndGet(-bytes);
  }

  public long held() {
    return held.get();
  }

  public long limit() {
    return limit;
  }
}
