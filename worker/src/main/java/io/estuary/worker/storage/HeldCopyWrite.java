package io.estuary.worker.storage;

import io.netty.buffer.ByteBuf;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;

/**
 * A replica copy the {@link PartitionCache} held in place of its file, written to that file whole (the cache needs
 * the room, or the worker stops gracefully). A disk error marks the disk failed, as a flush's does. Its future is
 * completed once, on the flusher thread (or the caller's, when refused); the slice it writes is released by
 * {@link FileWrite}, or here when it is never queued.
 */
final class HeldCopyWrite extends FileWrite {
    private final Disk disk;
    private final PartitionFile target;
    private final BooleanSupplier gone;
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    private HeldCopyWrite(Disk disk, PartitionFile target, String name, ByteBuf data, BooleanSupplier gone) {
        super(disk, target, name, data, 0, 0);
        this.disk = disk;
        this.target = target;
        this.gone = gone;
    }

    /**
     * Queues {@code data} (released here) for {@code target} on {@code disk}'s flusher; completes once on disk, or
     * exceptionally. {@code gone}: whether the partition was deleted or its disk failed since the commit (nothing is
     * written then, and a failure is no disk's).
     */
    static CompletableFuture<Void> start(
            Disk disk, PartitionFile target, String name, ByteBuf data, BooleanSupplier gone) {
        HeldCopyWrite w = new HeldCopyWrite(disk, target, name, data, gone);
        if (gone.getAsBoolean()) {
            data.release();
            w.done.completeExceptionally(new java.io.IOException(name + " was deleted or its disk failed"));
            return w.done;
        }
        try {
            disk.flusher().submit(w);
        } catch (RejectedExecutionException e) { // the worker is stopping
            data.release();
            w.done.completeExceptionally(e);
        }
        return w.done;
    }

    @Override
    void finished(Throwable error, boolean abandoned) {
        if (error == null) {
            done.complete(null);
            return;
        }
        if (!abandoned && !gone.getAsBoolean() && DiskErrors.classify(error) == DiskErrors.Kind.DISK_ERROR) {
            disk.markFailed("writing " + target.file() + " failed: " + error);
        }
        done.completeExceptionally(error);
    }
}
