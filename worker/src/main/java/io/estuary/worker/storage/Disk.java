package io.estuary.worker.storage;

import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.DiskStatus;
import java.io.File;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One storage directory (one disk): where its partition files live, its flusher and reader threads, and its health.
 *
 * <p>The health is what the {@link DiskChecker}'s last probe found, or {@code DISK_FAILED} once a write on it failed
 * with a disk error (until a probe finds it healthy again). Reading the health does no I/O, so the heartbeat and the
 * push path never touch a disk that may hang. Every entry into the failed state counts in {@link #failures()}: data
 * written on the disk before a failure is not trusted afterwards, even once the disk is used again. Entering the
 * failed state tells the {@link #onFailure} listeners, which give up the writes waiting for the disk, and gives up
 * the reads queued or running on its {@link DiskReaders} (their readers are answered {@code DISK_FAILED}). Deletions run
 * on the disk's own cleaner thread ({@link #deleteLater}). Thread-safe.
 */
public final class Disk {
    private final File dir;
    private final DiskFlusher flusher;
    private final DiskReaders readers;
    private final AtomicInteger activeSlots = new AtomicInteger();
    private final AtomicInteger failures = new AtomicInteger();
    private volatile DiskStatus status = DiskStatus.DISK_HEALTHY;
    private volatile String reason = "not probed yet";
    private volatile long usableBytes;
    private volatile Runnable onChange = () -> {};
    private final java.util.List<Runnable> onFailure = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Deletes files of expired shuffles: a hung disk stalls only its own deletions, never a heartbeat. */
    private final io.estuary.common.util.GuardedThreadPool cleaner;

    private volatile double recentFetchMicros;
    /** Alignment of direct writes on this disk, 0 when they are off or its file system does not take them. */
    private volatile int directAlignment;

    private final java.util.concurrent.atomic.AtomicLong directBytes = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong cachedBytes = new java.util.concurrent.atomic.AtomicLong();

    public Disk(File dir, int flushThreads, int readThreads) {
        this.dir = dir;
        this.flusher = new DiskFlusher(dir.getName(), flushThreads);
        this.readers = new DiskReaders(dir.getName(), readThreads, () -> {
            String f = failure();
            return f == null ? null : "its disk " + mountPoint() + " failed: " + f;
        });
        this.cleaner = new io.estuary.common.util.GuardedThreadPool("disk-cleaner-" + dir.getName(), 1);
        cleaner.allowCoreThreadTimeOut(true); // a disk with nothing to delete holds no thread
        this.usableBytes = dir.getUsableSpace();
        // Reads waiting for a disk that failed (or hangs) are answered now: their readers go to other copies.
        onFailure.add(() -> readers.giveUpAll("its disk " + mountPoint() + " failed: " + reason));
    }

    /** Records how long serving one chunk from this disk took (an exponentially weighted mean). */
    public synchronized void recordFetch(long nanos) {
        double micros = nanos / 1000.0;
        recentFetchMicros = recentFetchMicros == 0 ? micros : recentFetchMicros * 0.8 + micros * 0.2;
    }

    public String mountPoint() {
        return dir.getAbsolutePath();
    }

    public File dir() {
        return dir;
    }

    /** What {@link PartitionFileWriter#directIo} takes for a copy that is written directly here (0: never). */
    int directAlignment() {
        return directAlignment;
    }

    void directAlignment(int alignment) {
        this.directAlignment = alignment;
    }

    /** Counts {@code bytes} written to partition files, directly or through the page cache. */
    void wrote(long bytes, boolean direct) {
        (direct ? directBytes : cachedBytes).addAndGet(bytes);
    }

    /** Bytes written to partition files on this disk with {@code O_DIRECT} ({@code true}) or through the page cache. */
    public long writtenBytes(boolean direct) {
        return (direct ? directBytes : cachedBytes).get();
    }

    public DiskFlusher flusher() {
        return flusher;
    }

    public DiskReaders readers() {
        return readers;
    }

    public AtomicInteger activeSlots() {
        return activeSlots;
    }

    /** Called (on the caller's thread) after every change of {@link #status()}. */
    void onChange(Runnable listener) {
        this.onChange = listener;
    }

    /**
     * Runs {@code delete} (file deletions on this disk) on the disk's own cleaner thread, behind earlier ones; dropped
     * once the disk is closed.
     */
    public void deleteLater(Runnable delete) {
        try {
            cleaner.execute(delete);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            // the worker is stopping: what is left goes at the next expiry after a restart
        }
    }

    /** Deletions queued or running on this disk. */
    public int pendingDeletions() {
        return cleaner.getQueue().size() + cleaner.getActiveCount();
    }

    /**
     * Called (on the thread that changed the state, after {@link #onChange}) each time the disk enters the failed
     * state: the worker releases what waits for the disk. Must not block.
     */
    void onFailure(Runnable listener) {
        onFailure.add(listener);
    }

    /** Marks the disk failed after an I/O error on it; it gets no new slots until a probe finds it healthy. */
    public void markFailed(String why) {
        DiskStatus before = set(DiskStatus.DISK_FAILED, why);
        if (before != DiskStatus.DISK_FAILED) DiskChecker.logTransition(this, before, DiskStatus.DISK_FAILED, why);
    }

    /** Sets the state; returns the one before. */
    DiskStatus set(DiskStatus next, String why) {
        DiskStatus before;
        synchronized (this) {
            before = status;
            reason = why;
            if (before == next) return before;
            if (next == DiskStatus.DISK_FAILED) failures.incrementAndGet();
            status = next;
        }
        onChange.run();
        if (next == DiskStatus.DISK_FAILED) for (Runnable l : onFailure) l.run();
        return before;
    }

    void usableBytes(long bytes) {
        usableBytes = bytes;
    }

    /** Why the disk is failed, or null when it is not. */
    public String failure() {
        return status == DiskStatus.DISK_FAILED ? reason : null;
    }

    /** Why the disk is in its state (the last probe's finding). */
    public String reason() {
        return reason;
    }

    /** How many times the disk entered the failed state. */
    public int failures() {
        return failures.get();
    }

    public DiskStatus status() {
        return status;
    }

    /** Whether partitions already on the disk may still be written: it is neither failed nor full. */
    public boolean writable() {
        DiskStatus s = status;
        return s == DiskStatus.DISK_HEALTHY || s == DiskStatus.DISK_SLOW;
    }

    public DiskInfo info() {
        return DiskInfo.newBuilder()
                .setMountPoint(mountPoint())
                .setUsableBytes(usableBytes)
                .setStatus(status)
                .setActiveSlots(activeSlots.get())
                .setAvgFlushMicros(flusher.averageFlushMicros())
                .setAvgFetchMicros((long) recentFetchMicros)
                .build();
    }

    void close() {
        flusher.close();
        readers.close();
        cleaner.shutdownNow();
    }

    @Override
    public String toString() {
        return mountPoint();
    }
}
