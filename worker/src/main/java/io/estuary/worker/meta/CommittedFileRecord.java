package io.estuary.worker.meta;

import io.estuary.worker.storage.FileContents;
import java.util.Arrays;

/**
 * What the metadata store keeps of one committed location: its file, the disk (storage directory) it is on, its
 * length, where each chunk starts and what it holds (batches and records from the batch headers, CRC32C of its
 * bytes; {@link FileContents#NONE} for a record of the first format, which kept none). A restarted worker checks
 * the file against it before serving it. Immutable.
 */
public final class CommittedFileRecord {
    private final String shuffleKey;
    private final int partitionId;
    private final int epoch;
    private final String path;
    private final String mountPoint;
    private final long length;
    private final long[] chunkOffsets;
    private final FileContents contents;

    public CommittedFileRecord(
            String shuffleKey,
            int partitionId,
            int epoch,
            String path,
            String mountPoint,
            long length,
            long[] chunkOffsets,
            FileContents contents) {
        this.shuffleKey = shuffleKey;
        this.partitionId = partitionId;
        this.epoch = epoch;
        this.path = path;
        this.mountPoint = mountPoint;
        this.length = length;
        this.chunkOffsets = chunkOffsets.clone();
        this.contents = contents;
    }

    public String shuffleKey() {
        return shuffleKey;
    }

    public int partitionId() {
        return partitionId;
    }

    public int epoch() {
        return epoch;
    }

    public String path() {
        return path;
    }

    public String mountPoint() {
        return mountPoint;
    }

    public long length() {
        return length;
    }

    public long[] chunkOffsets() {
        return chunkOffsets.clone();
    }

    public FileContents contents() {
        return contents;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof CommittedFileRecord)) return false;
        CommittedFileRecord r = (CommittedFileRecord) o;
        return shuffleKey.equals(r.shuffleKey)
                && partitionId == r.partitionId
                && epoch == r.epoch
                && path.equals(r.path)
                && mountPoint.equals(r.mountPoint)
                && length == r.length
                && Arrays.equals(chunkOffsets, r.chunkOffsets)
                && contents.equals(r.contents);
    }

    @Override
    public int hashCode() {
        return shuffleKey.hashCode() * 31 + partitionId * 17 + epoch;
    }

    @Override
    public String toString() {
        return shuffleKey + " partition " + partitionId + " epoch " + epoch + " (" + path + ", " + length + " bytes, "
                + chunkOffsets.length + " chunks, " + contents + ")";
    }
}
