package io.estuary.worker.storage;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * A partition file after commit: its length, where each chunk starts and what it holds ({@link FileContents}).
 * Served to readers. A file whose disk has failed since the commit is lost for good, even once the disk is used
 * again: readers go to its replica.
 *
 * <p>A file an earlier run of the worker committed ({@link #restored}) is served only once its bytes are checked
 * against the recorded CRC32C ({@link #checkRestoredContent}, on a disk reader thread, at its first open): a file
 * changed while the worker was down is then lost, like one on a failed disk. One whose length or disk did not
 * match its record is {@link #lostAtRestart lost} from the start.
 *
 * <p>Thread-safe: fixed at construction but for the restored-file check, which runs once under the file's monitor
 * and publishes its outcome through volatile fields.
 */
public final class CommittedFile {
    private final File file;
    private final long[] chunkOffsets;
    private final long length;
    private final Disk disk;
    private final int diskFailuresAtCommit;
    /** Which maps lie where, or null (a file recovered after a restart, or index off): map ranges read it whole. */
    private final MapIndex mapIndex;

    private final FileContents contents;
    /** A restored file whose bytes are not checked against its recorded checksum yet. */
    private volatile boolean contentUnchecked;
    /** Why the file is lost regardless of its disk (found changed after a restart), or null. */
    private volatile String lost;

    public CommittedFile(File file, long[] chunkOffsets, long length, Disk disk) {
        this(file, chunkOffsets, length, disk, null, FileContents.NONE);
    }

    public CommittedFile(
            File file, long[] chunkOffsets, long length, Disk disk, MapIndex mapIndex, FileContents contents) {
        this.mapIndex = mapIndex;
        this.disk = disk;
        this.file = file;
        this.chunkOffsets = chunkOffsets;
        this.length = length;
        this.contents = contents;
        this.diskFailuresAtCommit = disk == null ? 0 : disk.failures();
    }

    /**
     * A file committed by an earlier run of this worker, whose length on disk matches its record. With a recorded
     * checksum, it is checked before it is first served; a record without one (an older format) is trusted.
     */
    public static CommittedFile restored(
            File file, long[] chunkOffsets, long length, Disk disk, FileContents contents) {
        CommittedFile f = new CommittedFile(file, chunkOffsets, length, disk, null, contents);
        f.contentUnchecked = contents.crc32c() != FileContents.UNKNOWN && length > 0;
        return f;
    }

    /** A recorded file that cannot be served after a restart (missing, another length, on an unknown disk). */
    public static CommittedFile lostAtRestart(
            File file, long[] chunkOffsets, long length, Disk disk, FileContents contents, String why) {
        CommittedFile f = new CommittedFile(file, chunkOffsets, length, disk, null, contents);
        f.lost = why;
        return f;
    }

    /**
     * Why this file can no longer be served (changed while the worker was down, or its disk failed since it was
     * committed), or null while it can.
     */
    public String lostReason() {
        String l = lost;
        if (l != null) return l;
        if (disk == null) return null;
        String failure = disk.failure();
        if (failure != null) return "its disk " + disk.mountPoint() + " failed: " + failure;
        if (disk.failures() != diskFailuresAtCommit) {
            return "its disk " + disk.mountPoint() + " failed after it was committed (" + disk.reason() + ")";
        }
        return null;
    }

    /** Whether {@link #checkRestoredContent} still has to read the file before it is served. */
    public boolean contentUnchecked() {
        return contentUnchecked;
    }

    /**
     * For a restored file not checked yet: reads it once and compares its CRC32C with the recorded one; a mismatch
     * or a read error marks it lost. Returns {@link #lostReason()} afterwards. Blocks on file I/O: call it on the
     * disk's reader threads, never on a network thread. Concurrent callers wait for the one reading.
     */
    public String checkRestoredContent() {
        if (contentUnchecked) {
            synchronized (this) {
                if (contentUnchecked) {
                    String why = null;
                    try {
                        long crc = crc32c(file, length);
                        if (crc != contents.crc32c()) {
                            why = "its bytes changed while the worker was down (crc32c " + Long.toHexString(crc)
                                    + ", recorded " + Long.toHexString(contents.crc32c()) + ")";
                        }
                    } catch (IOException e) {
                        why = "it could not be read to check it after a restart: " + e;
                    }
                    if (why != null) lost = why;
                    contentUnchecked = false;
                }
            }
        }
        return lostReason();
    }

    /** CRC32C of the first {@code length} bytes of {@code f}; fails if it is shorter. */
    static long crc32c(File f, long length) throws IOException {
        CRC32C crc = new CRC32C();
        ByteBuffer buf = ByteBuffer.allocate(256 * 1024); // heap: this runs rarely, and never holds direct memory
        try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.READ)) {
            long pos = 0;
            while (pos < length) {
                buf.clear();
                if (length - pos < buf.capacity()) buf.limit((int) (length - pos));
                int n = ch.read(buf, pos);
                if (n < 0) throw new IOException(f + " ends at " + pos + " bytes, before its " + length);
                buf.flip();
                crc.update(buf);
                pos += n;
            }
        }
        return crc.getValue();
    }

    /** Reads the whole file into {@code buf} (room for {@link #length} bytes); blocking file I/O. */
    void readInto(io.netty.buffer.ByteBuf buf) throws IOException {
        try (FileChannel ch = FileChannel.open(file.toPath(), StandardOpenOption.READ)) {
            while (buf.writerIndex() < length) {
                if (buf.writeBytes(ch, buf.writerIndex(), (int) (length - buf.writerIndex())) < 0) {
                    throw new java.io.EOFException(file + " ends before its committed length " + length);
                }
            }
        }
    }

    public File file() {
        return file;
    }

    public Disk disk() {
        return disk;
    }

    public long length() {
        return length;
    }

    public int numChunks() {
        return chunkOffsets.length;
    }

    public FileContents contents() {
        return contents;
    }

    public long chunkOffset(int i) {
        return chunkOffsets[i];
    }

    public long chunkLength(int i) {
        long end = i + 1 < chunkOffsets.length ? chunkOffsets[i + 1] : length;
        return end - chunkOffsets[i];
    }

    public MapIndex mapIndex() {
        return mapIndex;
    }

    /** Every chunk of the file. */
    public FileSegments allChunks() {
        long[] lengths = new long[chunkOffsets.length];
        for (int i = 0; i < lengths.length; i++) lengths[i] = chunkLength(i);
        return new FileSegments(chunkOffsets.clone(), lengths);
    }

    /**
     * What a reader of maps [startMap, endMap) is served: with a map index, only the ranges that may hold those maps'
     * batches; without one, or for {@code endMap <= startMap} (every map), every chunk.
     */
    public FileSegments segmentsFor(int startMap, int endMap) {
        if (mapIndex == null || endMap <= startMap) return allChunks();
        return mapIndex.select(startMap, endMap, chunkOffsets);
    }
}
