package io.estuary.worker.storage;

import io.estuary.common.util.NamedThreadFactory;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The threads that do a disk's file I/O for readers (checking and opening partition files for streams and
 * chunks). One queue and thread limit per disk, so a slow or hung disk stalls only its own readers, and network
 * threads never wait on a disk. Thread-safe.
 */
public final class DiskReaders implements Executor {
  private final ThreadPoolExecutor threads;

  public DiskReaders(String diskName, int threadCount) {
    this.threads = new ThreadPoolExecutor(threadCount, threadCount, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
        new NamedThreadFactory("fetch-" + diskName));
    threads.allowCoreThreadTimeOut(true); // idle disks hold no threads
  }

  /** Runs {@code read} on one of this disk's threads; throws RejectedExecutionException once closed. */
  @Override
  public void execute(Runnable read) {
    threads.execute(read);
  }

  /** Reads waiting for a thread. */
  public int queued() {
    return threads.getQueue().size();
  }

  public void close() {
    threads.shutdownNow();
  }
}
