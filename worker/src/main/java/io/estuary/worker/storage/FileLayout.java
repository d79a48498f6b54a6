package io.estuary.worker.storage;

import io.netty.buffer.ByteBuf;
import java.io.File;
import java.util.ArrayList;
import java.util.List;

/**
 * The shape of one partition file as its pushes are appended: its length, where each chunk starts, its
 * {@link MapIndex} and its {@link FileContents}. Chunk boundaries fall between pushes (a push holds only whole
 * batches, so every chunk starts on a batch), and a chunk grows past its size only when one push alone is larger.
 *
 * <p>The first chunks of a large file are smaller ({@link #chunkLimit}: an eighth of the chunk size, at least
 * {@link #RAMP_FLOOR}, doubling up to the chunk size): a reducer decodes nothing before its first chunk has arrived
 * whole, so a small first chunk starts it sooner, while the larger ones behind it are already on their way.
 *
 * <p>Not thread-safe: its {@link PartitionFileWriter} calls it under the writer's lock, which also puts the flush
 * buffers in file order for the checksum.
 */
final class FileLayout {
    private final long chunkSize;
    /** The smallest first chunk; with chunk sizes up to 8 times this, every chunk has the chunk size. */
    static final long RAMP_FLOOR = 1 << 20;

    /** Null when map indexing is off. */
    private final MapIndex.Builder mapIndex;

    private final List<Long> chunkOffsets = new ArrayList<>();
    private final FileContents.Tally contents = new FileContents.Tally();
    private long length;
    private long lastChunkStart;

    /** @param mapIndexGranularity region size of the file's {@link MapIndex}; 0 builds none */
    FileLayout(long chunkSize, long mapIndexGranularity) {
        this.chunkSize = chunkSize;
        this.mapIndex = mapIndexGranularity > 0 ? new MapIndex.Builder(mapIndexGranularity) : null;
    }

    /** The size of chunk {@code index} of the file: the chunk size, ramped up over the first chunks. */
    long chunkLimit(int index) {
        long first = Math.max(RAMP_FLOOR, chunkSize / 8);
        return index >= 3 ? chunkSize : Math.min(chunkSize, first << index);
    }

    /** Bytes appended so far: the size the file will have. */
    long length() {
        return length;
    }

    /** Places a non-empty push (whole batches) at the end of the file; does not consume it. */
    void append(ByteBuf push) {
        int n = push.readableBytes();
        boolean chunkStart = false;
        if (length == 0) {
            chunkOffsets.add(0L);
            chunkStart = true;
        } else if (length > lastChunkStart && length - lastChunkStart + n > chunkLimit(chunkOffsets.size() - 1)) {
            chunkOffsets.add(length);
            lastChunkStart = length;
            chunkStart = true;
        }
        if (mapIndex != null) mapIndex.add(length, push, chunkStart);
        contents.countBatches(push);
        length += n;
    }

    /** Adds a flush buffer, the next bytes of the file as queued for writing, to the file's checksum. */
    void queued(ByteBuf flushBuffer) {
        contents.written(flushBuffer);
    }

    /** The file as committed, once every byte appended is on {@code disk}. */
    CommittedFile committed(File file, Disk disk) {
        long[] offsets = new long[chunkOffsets.size()];
        for (int i = 0; i < offsets.length; i++) offsets[i] = chunkOffsets.get(i);
        return new CommittedFile(
                file, offsets, length, disk, mapIndex == null ? null : mapIndex.build(length), contents.result());
    }
}
