package io.estuary.worker.storage;

import io.estuary.common.util.NamedThreadFactory;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The threads that write one disk. Each disk has its own queue and thread limit, so a slow or failing disk delays
 * only the partitions on it.
 */
public final class DiskFlusher {
  private final ExecutorService threads;
  private final AtomicLong flushes = new AtomicLong();
  private final AtomicLong flushNanos = new AtomicLong();

  public DiskFlusher(String diskName, int threadCount) {
    this.threads = new ThreadPoolExecutor(threadCount, threadCount, 0, TimeUnit.MILLISECONDS,
        new LinkedBlockingQueue<>(), new NamedThreadFactory("flusher-" + diskName));
  }

  public void submit(Runnable flush) {
    threads.execute(() -> {
      long t0 = System.nanoTime();
      flush.run();
      flushNanos.addAndGet(System.nanoTime() - t0);
      flushes.incrementAndGet();
    });
  }

  /** Mean time of one flush since start, in microseconds. */
  public long averageFlushMicros() {
    long n = flushes.get();
    return n == 0 ? 0 : flushNanos.get() / n / 1000;
  }

  public void close() {
    threads.shutdown();
    try {
      threads.awaitTermination(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
