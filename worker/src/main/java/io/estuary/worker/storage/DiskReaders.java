package io.estuary.worker.storage;

import io.estuary.common.util.GuardedThreadPool;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The threads that do a disk's file I/O for readers (checking and opening partition files for streams and
 * chunks). One queue and thread limit per disk, so a slow or hung disk stalls only its own readers, and network
 * threads never wait on a disk.
 *
 * <p>A read submitted with a give-up ({@link #execute(Runnable, Consumer)}) is answered even when its disk never
 * returns: once the disk is declared failed ({@link #giveUpAll}, on the disk's failure), every such read queued or
 * running is handed to its give-up, which answers the reader (who then reads another copy). A queued read given up
 * never runs; a running one keeps its thread until the disk returns, and must then find its reader already answered
 * (the caller makes its answer happen once). Thread-safe.
 */
public final class DiskReaders implements Executor {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(DiskReaders.class);

    private final GuardedThreadPool threads;
    private final Set<Pending> pending = ConcurrentHashMap.newKeySet();
    private final AtomicLong givenUp = new AtomicLong();

    /** A read queued or running, until it ends or is given up (whichever comes first takes it off the set). */
    private static final class Pending {
        final Consumer<String> giveUp;
        final AtomicBoolean gaveUp = new AtomicBoolean();

        Pending(Consumer<String> giveUp) {
            this.giveUp = giveUp;
        }
    }

    /** Why the disk is failed now, or null: a read submitted then is given up at once. */
    private final Supplier<String> failure;

    public DiskReaders(String diskName, int threadCount) {
        this(diskName, threadCount, () -> null);
    }

    /** {@code failure}: why the disk is failed now, or null when it is not (read without I/O, on any thread). */
    public DiskReaders(String diskName, int threadCount, Supplier<String> failure) {
        this.threads = new GuardedThreadPool("fetch-" + diskName, threadCount);
        this.failure = failure;
        threads.allowCoreThreadTimeOut(true); // idle disks hold no threads
    }

    /** Runs {@code read} on one of this disk's threads; throws RejectedExecutionException once closed. */
    @Override
    public void execute(Runnable read) {
        threads.execute(read);
    }

    /**
     * Runs {@code read} on one of this disk's threads, or, if the disk is declared failed while the read is queued or
     * running, calls {@code giveUp} with why (on the thread that declared it; must not block). A read submitted while
     * the disk is failed is given up at once, on the caller's thread. Both may happen for a read already running: its
     * answer must count once. Throws RejectedExecutionException once closed.
     */
    public void execute(Runnable read, Consumer<String> giveUp) {
        Pending p = new Pending(giveUp);
        pending.add(p);
        // The disk may have failed after the caller checked it and before the add: then no giveUpAll saw this read.
        String failed = failure.get();
        if (failed != null) {
            giveUp(p, failed);
            return;
        }
        try {
            threads.execute(() -> {
                try {
                    if (!p.gaveUp.get()) read.run();
                } finally {
                    pending.remove(p);
                }
            });
        } catch (RejectedExecutionException e) {
            pending.remove(p);
            throw e;
        }
    }

    /**
     * Gives up every read queued or running now ({@code why}: the disk's failure); returns how many. Their threads
     * may stay blocked on the disk, but their readers are answered.
     */
    public int giveUpAll(String why) {
        int n = 0;
        for (Pending p : pending) {
            if (giveUp(p, why)) n++;
        }
        return n;
    }

    /** Gives {@code p} up unless it ended or was given up already; returns whether it was given up now. */
    private boolean giveUp(Pending p, String why) {
        if (!pending.remove(p) || !p.gaveUp.compareAndSet(false, true)) return false;
        givenUp.incrementAndGet();
        try {
            p.giveUp.accept(why);
        } catch (RuntimeException e) { // one answer failing to go out must not keep the other readers waiting
            LOG.warn("Answering a read given up on a failed disk failed", e);
        }
        return true;
    }

    /** Reads given up so far because the disk failed under them. */
    public long givenUp() {
        return givenUp.get();
    }

    /** Reads with a give-up that are queued or running now. */
    public int pending() {
        return pending.size();
    }

    /** Reads waiting for a thread. */
    public int queued() {
        return threads.getQueue().size();
    }

    public void close() {
        threads.shutdownNow();
    }
}
