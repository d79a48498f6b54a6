package io.estuary.worker.storage;

import java.io.IOException;
import java.nio.file.FileSystemException;

/**
 * Sorts an I/O error on a storage directory into what it says about the disk. Only {@link Kind#DISK_ERROR} means
 * the disk is faulty: a full file system and a process out of file descriptors are conditions that pass, and must
 * not take a disk (and every partition committed on it) out of service.
 *
 * <p>The JDK reports errno only as its text ({@code strerror}) in the exception message or in
 * {@link FileSystemException#getReason()}, so that text is what is looked at here; it is the only place in the
 * worker that reads an error message. Stateless.
 */
public final class DiskErrors {
    private DiskErrors() {}

    /** What an I/O error means for the disk. */
    public enum Kind {
        /** ENOSPC / EDQUOT: the file system is full; the disk is full, not failed. */
        NO_SPACE,
        /** EMFILE / ENFILE: this process (or the host) is out of file descriptors; nothing is wrong with the disk. */
        TOO_MANY_OPEN_FILES,
        /** Anything else (EIO, EROFS, a missing or replaced directory, ...): the disk failed. */
        DISK_ERROR
    }

    public static Kind classify(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            Kind k = classifyOne(t);
            if (k != Kind.DISK_ERROR) return k;
        }
        return Kind.DISK_ERROR;
    }

    private static Kind classifyOne(Throwable t) {
        if (!(t instanceof IOException)) return Kind.DISK_ERROR;
        String text = t instanceof FileSystemException && ((FileSystemException) t).getReason() != null
                ? ((FileSystemException) t).getReason()
                : t.getMessage();
        if (text == null) return Kind.DISK_ERROR;
        if (text.contains("No space left on device") || text.contains("Disk quota exceeded")) return Kind.NO_SPACE;
        if (text.contains("Too many open files")) return Kind.TOO_MANY_OPEN_FILES; // EMFILE, and ENFILE "... in system"
        return Kind.DISK_ERROR;
    }
}
