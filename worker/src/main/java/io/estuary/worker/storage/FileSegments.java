package io.estuary.worker.storage;

/**
 * The byte ranges of a committed partition file that one stream serves, in file order: every chunk of the file, or
 * for a map-range read only the ranges that may hold those maps' batches. Each range starts on a batch and ends
 * where a batch ends. Immutable.
 */
public final class FileSegments {
    private final long[] offsets;
    private final long[] lengths;

    FileSegments(long[] offsets, long[] lengths) {
        this.offsets = offsets;
        this.lengths = lengths;
    }

    public int count() {
        return offsets.length;
    }

    public long offset(int i) {
        return offsets[i];
    }

    public long length(int i) {
        return lengths[i];
    }

    /** Bytes over all segments. */
    public long totalBytes() {
        long n = 0;
        for (long l : lengths) n += l;
        return n;
    }
}
