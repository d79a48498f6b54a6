package io.estuary.worker.storage;

import io.estuary.common.protocol.DiskStatus;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.common.util.EstuaryException;
import io.netty.buffer.ByteBuf;
import java.io.File;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;

/**
 * Merges the pushes of one partition (one epoch) into one file. Pushed bytes are gathered in an off-heap flush
 * buffer; once it holds a flush buffer's worth it goes to the disk's flusher, which writes it at the file offset
 * fixed when it was queued (so several flusher threads may write one file safely). Chunk boundaries fall between
 * pushes, and a push holds only whole batches, so every chunk starts on a batch ({@link FileLayout}).
 *
 * <p>Copying a push into the {@link FlushBuffer} (one memcpy) frees the network buffer at once: a small push can
 * never pin a large frame. The memory tracker counts the flush buffer's capacity (what is really held) from
 * allocation until its write is done. A partly filled buffer can be written early ({@link #flushBuffered}) under memory
 * pressure or when it grows old; chunk boundaries do not depend on when flushes happen.
 *
 * <p>The committed file carries its {@link FileContents}: batches and records counted from the batch headers as
 * pushes are appended, and the CRC32C of its bytes, updated with each flush buffer as it is queued (in file order,
 * under the writer's lock) rather than by reading the file back.
 *
 * <p>Thread-safe: appends, commits and early flushes synchronize on the writer; file writes run on the disk's
 * flusher threads at positions fixed under that lock.
 *
 * <p>The file ({@link PartitionFile}) is created when the first bytes arrive, ahead of their flush, and open only
 * while a flush writes it. A copy the worker may hold in memory ({@link #holdInMemory}) that never filled a flush
 * buffer goes whole to the {@link PartitionCache} at its commit instead of to its file, which the cache writes right
 * after (a replicated primary) or later, if ever (a replica: its file is created only by its first write). Its
 * commit completes without waiting for the disk.
 *
 * <p>Disk faults: a push to a partition whose disk is failed (or has failed since the partition was reserved) is
 * refused with {@code DISK_FAILED}, and one whose disk is full with {@code HARD_SPLIT}; either way the client moves
 * the partition elsewhere without blaming the worker. A write that fails with a disk error marks the disk failed;
 * a full file system or running out of file descriptors fails only this partition. A partition whose disk failed
 * during its life does not commit: its bytes may not be on the disk (its replica, if any, serves readers). When
 * the disk is declared failed or hung, its buffered data is dropped ({@link #diskFailed}) and its queued writes are
 * given up ({@link QueuedWrite}), so their memory is released, no pause waits for them and a commit answers (failed)
 * at once.
 */
public final class PartitionFileWriter {
    private final String name;
    private final File file;
    private final Disk disk;
    private final MemoryTracker memory;
    private final PartitionFile partitionFile;

    /** The disk's failure count when this partition was reserved: any failure since then makes this file suspect. */
    private final int diskFailuresAtStart;

    private final FlushBuffer pending;
    private final FileLayout layout;
    private long flushAssigned;
    private int flushesInFlight;
    private Throwable error;
    private CompletableFuture<CommittedFile> commit;
    private volatile boolean destroyed;
    /** Set by {@link #close}: takes no more data. */
    private boolean closed;
    /** Bytes {@link #close} dropped unwritten: a later commit fails rather than commit a file missing them. */
    private long dropped;
    /** Whether the file's creation was queued (ahead of its first flush) or a flush was. */
    private boolean creationQueued;
    /** Where this copy is kept at its commit if it is small (null: unreplicated, or written as usual). */
    private PartitionCache holdIn;

    private String holdKey;
    private boolean holdWriteAtOnce;
    /** The committed file held in {@link #holdIn}: its identity is the cache's key. */
    private CommittedFile held;
    /** Nonzero: flush buffers are written with {@code O_DIRECT} while the file's end stays a multiple of it. */
    private int directAlignment;

    public PartitionFileWriter(
            String name, File file, Disk disk, MemoryTracker memory, long flushThreshold, long chunkSize) {
        this(name, file, disk, memory, flushThreshold, chunkSize, 0, io.estuary.common.time.Clock.system());
    }

    /**
     * @param mapIndexGranularity region size of the file's {@link MapIndex}; 0 builds none
     * @param clock dates the oldest buffered byte ({@link #bufferedSinceNanos})
     */
    public PartitionFileWriter(
            String name,
            File file,
            Disk disk,
            MemoryTracker memory,
            long flushThreshold,
            long chunkSize,
            long mapIndexGranularity,
            io.estuary.common.time.Clock clock) {
        this.name = name;
        this.file = file;
        this.partitionFile = new PartitionFile(file);
        this.disk = disk;
        this.memory = memory;
        this.pending = new FlushBuffer(name, memory, (int) flushThreshold, clock);
        this.layout = new FileLayout(chunkSize, mapIndexGranularity);
        this.diskFailuresAtStart = disk.failures();
    }

    public Disk disk() {
        return disk;
    }

    /**
     * Makes this location a copy that {@code cache} keeps at commit when it never filled a flush buffer, or (null) an
     * ordinary one; {@code shuffleKey} is its shuffle's, for the cache's removal per shuffle. {@code writeAtOnce}: its
     * file is written right after the commit (a replicated primary), not when the cache needs the room (a replica).
     */
    public synchronized void holdInMemory(PartitionCache cache, String shuffleKey, boolean writeAtOnce) {
        holdIn = cache != null && cache.enabled() ? cache : null;
        holdKey = shuffleKey;
        holdWriteAtOnce = writeAtOnce;
    }

    /**
     * Writes flush buffers with {@code O_DIRECT} ({@link DirectWrites}), 0: through the page cache. A flush writes its
     * buffer's aligned head and carries the tail to the next buffer; the commit writes the last tail through the page
     * cache; an early flush under one block goes through the page cache, and so does the rest of the file.
     */
    public synchronized void directIo(int alignment) {
        if (alignment == 0 || flushAssigned % alignment == 0) directAlignment = alignment;
    }

    /** A forward to this primary's replica failed: the replica may lack data, so this copy commits from disk. */
    public synchronized void replicaMissedData() {
        if (holdWriteAtOnce) holdIn = null;
    }

    /** Bytes appended so far: the size the file will have. */
    public synchronized long size() {
        return layout.length();
    }

    /** Appends {@code data} (whole batches) and releases it. Fails for a committed, destroyed or failed partition. */
    public void append(ByteBuf data) {
        try {
            synchronized (this) {
                if (closed) {
                    throw new StatusException(
                            StatusCode.HARD_SPLIT,
                            name + " cannot take data: the worker is stopping; push "
                                    + "to the partition's next epoch");
                }
                if (error != null) {
                    throw new StatusException(
                            StatusCode.DISK_FAILED, name + " cannot take data: an earlier write failed: " + error);
                }
                if (destroyed) {
                    throw new StatusException(
                            StatusCode.UNKNOWN_LOCATION,
                            name + " was deleted (its shuffle expired or was " + "unregistered)");
                }
                if (commit != null) {
                    throw new StatusException(
                            StatusCode.STAGE_ENDED,
                            name + " is already committed; a late push from a map " + "attempt that lost");
                }
                checkDisk();
                int n = data.readableBytes();
                if (n == 0) return;
                if (pending.wouldOverflow(n)) flushPending(true, false);
                pending.reserve(n);
                layout.append(data);
                pending.write(data);
                if (pending.full()) flushPending(true, false);
                else if (!creationQueued && (holdIn == null || holdWriteAtOnce)) { // a primary's file comes soon
                    creationQueued = true;
                    partitionFile.createAhead(disk);
                }
            }
        } finally {
            data.release();
        }
    }

    /** Bytes in the partly filled buffer, not yet queued for a write. */
    public synchronized int bufferedBytes() {
        return pending.readable();
    }

    /** When the oldest byte in the buffer arrived (the clock's nanos), or 0 when nothing is buffered. */
    public synchronized long bufferedSinceNanos() {
        return pending.sinceNanos();
    }

    /** Whether the writer takes no more data (committed, deleted or failed), so it never needs an early flush. */
    public synchronized boolean retired() {
        return commit != null || destroyed || error != null || closed;
    }

    /**
     * Queues the partly filled buffer for writing now instead of when it fills up. Returns the memory this will
     * free once written (0 when nothing was buffered or the writer is retired).
     */
    public synchronized long flushBuffered() {
        if (pending.readable() == 0 || commit != null || destroyed || error != null || closed) return 0;
        long before = pending.counted();
        flushPending(false, false);
        return before - pending.counted(); // a direct write's tail stays
    }

    /** Refuses data when the disk is failed (or failed since this partition began) or full. */
    private void checkDisk() {
        if (disk.failures() != diskFailuresAtStart || disk.status() == DiskStatus.DISK_FAILED) {
            String why = disk.failure();
            throw new StatusException(
                    StatusCode.DISK_FAILED,
                    name + " cannot take data: its disk " + disk.mountPoint()
                            + (why != null ? " failed: " + why : " failed since the partition was placed on it"));
        }
        if (disk.status() == DiskStatus.DISK_FULL) {
            throw new StatusException(
                    StatusCode.HARD_SPLIT,
                    name + " cannot take data: its disk " + disk.mountPoint() + " is full (" + disk.reason()
                            + "); push to the partition's next epoch");
        }
    }

    /** Queues the buffer; {@code filled}: it filled up ({@link FlushBuffer#take(boolean)}); {@code last}: the commit's. */
    private void flushPending(boolean filled, boolean last) {
        // Flush buffers are queued in file order, so the checksum sees the file's bytes in order, each once.
        layout.queued(pending.unqueued());
        int counted = pending.counted();
        int align = directAlignment;
        ByteBuf buf = align > 0 && flushAssigned % align == 0 ? pending.takeAligned(align, filled) : null;
        if (buf != null) {
            queueWrite(buf, counted, align);
            if (!last || pending.readable() == 0) return;
            counted = pending.counted(); // the file's last, partial block: through the page cache
        }
        queueWrite(pending.take(filled), counted, 0);
    }

    /**
     * Sends a taken flush buffer ({@code counted} bytes of memory) to the flusher, at the next file position;
     * {@code directAlignment} nonzero: written with {@code O_DIRECT}.
     */
    private void queueWrite(ByteBuf buf, int counted, int directAlignment) {
        creationQueued = true; // the write creates the file
        long position = flushAssigned;
        flushAssigned += buf.readableBytes();
        flushesInFlight++;
        memory.flushQueued(counted);
        QueuedWrite w = new BufferWrite(buf, counted, position, directAlignment);
        try {
            disk.flusher().submit(w);
        } catch (RejectedExecutionException e) { // the worker is shutting down
            flushesInFlight--;
            memory.flushDone(counted);
            memory.release(counted);
            buf.release();
            if (error == null) error = e;
            return;
        }
        // The disk may have failed since this partition began, after its flusher gave up what was queued then.
        if (disk.failures() != diskFailuresAtStart) w.abandon("the partition's disk failed while it was written");
    }

    /** One flush buffer on its way to the file. */
    private final class BufferWrite extends FileWrite {
        private final int counted;

        BufferWrite(ByteBuf buf, int counted, long position, int directAlignment) {
            super(disk, partitionFile, name, buf, position, directAlignment);
            this.counted = counted;
        }

        @Override
        void finished(Throwable e, boolean abandoned) {
            if (e != null && !abandoned && !destroyed && DiskErrors.classify(e) == DiskErrors.Kind.DISK_ERROR) {
                // ENOSPC and EMFILE fail this partition only; the disk probe decides whether the disk is full.
                disk.markFailed("writing " + file + " failed: " + e);
            }
            memory.flushDone(counted);
            memory.release(counted);
            synchronized (PartitionFileWriter.this) {
                if (e != null && error == null) {
                    error = abandoned
                            ? new StatusException(
                                    StatusCode.DISK_FAILED,
                                    "its disk " + disk.mountPoint() + " failed or hangs; its write was given up: "
                                            + e.getMessage())
                            : e;
                }
                flushesInFlight--;
                finishCommitIfDone();
            }
        }
    }

    /**
     * The disk failed (or hangs): drops the data buffered and not yet queued, releasing its memory, and takes no more;
     * a commit fails. Writes already queued are given up by the disk's flusher.
     */
    synchronized void diskFailed(String why) {
        if (error == null)
            error = new StatusException(
                    StatusCode.DISK_FAILED, name + ": its disk " + disk.mountPoint() + " failed: " + why);
        dropped += pending.drop();
        finishCommitIfDone();
    }

    /**
     * Flushes what is left and completes once every byte is on disk, or, for a copy held in memory, once earlier
     * flushes (none) are done and the cache holds the rest. Calling it again returns the same result.
     */
    public synchronized CompletableFuture<CommittedFile> commit() {
        if (commit != null) return commit;
        commit = new CompletableFuture<>();
        if (pending.readable() > 0 && !holdCommitted()) flushPending(false, true);
        finishCommitIfDone();
        return commit;
    }

    /**
     * At commit, a copy to hold whose every byte is still in its first flush buffer: offers that buffer to the cache
     * in place of the file (written by the cache, at once or when it needs the room). Returns whether the buffer is taken care of (held, or refused and queued for writing).
     */
    private boolean holdCommitted() {
        if (holdIn == null || flushAssigned > 0 || error != null || dropped > 0 || destroyed || closed) return false;
        if (disk.failures() != diskFailuresAtStart || !holdIn.accepts(layout.length())) return false;
        int counted = pending.counted();
        layout.queued(pending.unqueued());
        ByteBuf buf = pending.take();
        CommittedFile f = layout.committed(file, disk);
        if (holdIn.hold(
                holdKey,
                f,
                buf,
                data -> HeldCopyWrite.start(
                        disk, partitionFile, name, data, () -> destroyed || disk.failures() != diskFailuresAtStart),
                holdWriteAtOnce)) {
            held = f;
        } else {
            queueWrite(buf, counted, 0);
        }
        return true;
    }

    private void finishCommitIfDone() {
        if (commit == null || commit.isDone() || flushesInFlight > 0) return;
        if (error == null && dropped > 0) {
            error = new StatusException(
                    StatusCode.HARD_SPLIT,
                    "the worker closed and dropped " + dropped + " buffered " + "bytes before the commit");
        }
        // A held copy is committed from memory; its disk failing afterwards makes it lost, as for any committed file.
        if (error == null && held == null && disk.failures() != diskFailuresAtStart) {
            error = new StatusException(
                    StatusCode.DISK_FAILED, "its disk " + disk.mountPoint() + " failed while it was " + "written");
        }
        if (error != null) {
            commit.completeExceptionally(new EstuaryException(name + " failed to write " + file + ": " + error, error));
            return;
        }
        commit.complete(held != null ? held : layout.committed(file, disk));
    }

    /**
     * Drops the buffered data not yet queued for writing and takes no more data; the file keeps what was written (as
     * after a crash). For a worker closing without committing, so the buffer's direct memory is freed; writes already
     * queued still complete. A commit that has not flushed yet fails afterwards, since bytes were dropped.
     */
    public synchronized void close() {
        if (closed) return;
        closed = true;
        dropped += pending.drop();
    }

    /** Drops buffered data and deletes the file (later, on the disk's cleaner thread). */
    public void destroy() {
        synchronized (this) {
            if (destroyed) return;
            destroyed = true;
            pending.drop();
        }
        // The file goes on the disk's own thread: a hung disk must not hold up the caller (a heartbeat).
        disk.deleteLater(() -> {
            try {
                DiskHangInjection.await(file);
            } catch (java.io.InterruptedIOException e) {
                return;
            }
            partitionFile.delete();
        });
    }

    @Override
    public String toString() {
        return name;
    }
}
