package io.estuary.worker.storage;

import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.util.concurrent.RejectedExecutionException;

/**
 * The file of one partition writer on its disk: created ahead of its first flush, opened for each flush (and closed
 * after it, so open files are bounded by the flusher threads, not by the partitions a worker holds), deleted once.
 * Once deleted it is never created again: a flush already writing when it is deleted writes to the unlinked file,
 * which goes with it. Thread-safe: creating, opening and deleting hold one lock, never while waiting for anything else.
 */
final class PartitionFile {
    private final File file;
    private final Object lock = new Object();
    private boolean deleted;
    /** Whether this writer made sure of the file's folder (each flush checked it before: a syscall per flush). */
    private boolean folderMade;

    PartitionFile(File file) {
        this.file = file;
    }

    File file() {
        return file;
    }

    /**
     * Queues the creation of the (empty) file on {@code disk}'s flusher (not on a failed disk), so that the flush that first writes it, often the
     * commit's for a partition smaller than a flush buffer, only opens it: creating thousands of files at a stage's
     * end held its commit up (a file create costs a few hundred microseconds on a journaling file system). A failure is
     * left to the first write, which meets it again and reports it.
     */
    void createAhead(Disk disk) {
        try {
            disk.flusher().prepare(() -> {
                if (disk.status() == io.estuary.common.protocol.DiskStatus.DISK_FAILED) return;
                try {
                    DiskHangInjection.await(file);
                    synchronized (lock) {
                        if (deleted || file.exists()) return;
                        create(false).close();
                    }
                } catch (IOException | RuntimeException e) {
                    // The first write opens the file itself and reports what goes wrong.
                }
            });
        } catch (RejectedExecutionException e) {
            // The worker is shutting down: a write, if any, is refused the same way and reports it.
        }
    }

    /**
     * Opens the file for one flush, creating it if needed, with {@code O_DIRECT} when {@code direct}; fails once it
     * was deleted.
     */
    FileChannel openForWrite(String name, boolean direct) throws IOException {
        synchronized (lock) {
            if (deleted) throw new IOException(name + " was deleted");
            return create(direct);
        }
    }

    /** Opens (creating) the file; its folder is made the first time only, or again if it went missing. */
    private FileChannel create(boolean direct) throws IOException {
        if (!folderMade) {
            Files.createDirectories(file.getParentFile().toPath());
            folderMade = true;
        }
        try {
            return FileChannel.open(file.toPath(), DirectWrites.writeOptions(direct));
        } catch (java.nio.file.NoSuchFileException e) {
            Files.createDirectories(file.getParentFile().toPath());
            return FileChannel.open(file.toPath(), DirectWrites.writeOptions(direct));
        }
    }

    /** Deletes the file (on the caller's thread: the disk's cleaner); it is never created again. */
    void delete() {
        synchronized (lock) {
            deleted = true;
            if (!file.delete() && file.exists()) file.deleteOnExit();
        }
    }
}
