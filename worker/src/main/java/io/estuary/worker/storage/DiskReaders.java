package io.estuary.worker.storage;

import io.estuary.common.util.GuardedThreadPool;
import java.util.concurrent.Executor;

/**
 * The threads that do a disk's file I/O for readers (checking and opening partition files for streams and
 * chunks). One queue and thread limit per disk, so a slow or hung disk stalls only its own readers, and network
 * threads never wait on a disk. Thread-safe.
 */
public final class DiskReaders implements Executor {
    private final GuardedThreadPool threads;

    public DiskReaders(String diskName, int threadCount) {
        this.threads = new GuardedThreadPool("fetch-" + diskName, threadCount);
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
