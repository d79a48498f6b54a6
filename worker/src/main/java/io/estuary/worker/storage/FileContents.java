package io.estuary.worker.storage;

import io.estuary.common.util.BatchLayout;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * What a committed partition file holds, as its writer saw it: the number of batches and of records (summed from
 * the batch headers of the pushes) and the CRC32C of every byte of the file. Kept with the file's record in the
 * metadata store, so a restarted worker can tell a file changed while it was down from the one it committed.
 * {@link #UNKNOWN} stands for a figure that is not known (a record of an older format, or a push whose batches did
 * not parse). Immutable.
 */
public final class FileContents {
    public static final long UNKNOWN = -1;
    /** Nothing known: files of records written before contents were kept. */
    public static final FileContents NONE = new FileContents(UNKNOWN, UNKNOWN, UNKNOWN);

    private final long batches;
    private final long records;
    private final long crc32c;

    public FileContents(long batches, long records, long crc32c) {
        this.batches = batches;
        this.records = records;
        this.crc32c = crc32c;
    }

    public long batches() {
        return batches;
    }

    public long records() {
        return records;
    }
    /** The CRC32C of the file's bytes (an unsigned 32-bit value), or {@link #UNKNOWN}. */
    public long crc32c() {
        return crc32c;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof FileContents)) return false;
        FileContents c = (FileContents) o;
        return batches == c.batches && records == c.records && crc32c == c.crc32c;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(batches * 31 + records) * 31 + Long.hashCode(crc32c);
    }

    @Override
    public String toString() {
        return batches + " batches, " + records + " records, crc32c "
                + (crc32c == UNKNOWN ? "unknown" : Long.toHexString(crc32c));
    }

    /**
     * Adds up a file's contents as it is written. Counts come from the headers of each push as it is appended; the
     * checksum is updated with each flush buffer, in file order, as it is handed to the flusher (a memory pass over
     * bytes already in memory; the file is never read back). Not thread-safe: the writer calls it under its lock,
     * which also puts the flush buffers in file order.
     */
    static final class Tally {
        private final CRC32C crc = new CRC32C();
        private long batches;
        private long records;
        private boolean countsKnown = true;

        /** Counts the batches of a push (whole batches); a push that does not parse leaves the counts unknown. */
        void countBatches(ByteBuf push) {
            if (!countsKnown) return;
            int pos = push.readerIndex();
            int end = push.writerIndex();
            long b = 0;
            long r = 0;
            while (pos < end) {
                int dataLength = end - pos >= BatchLayout.HEADER_SIZE ? push.getInt(pos + BatchLayout.DATA_LENGTH) : -1;
                int n = dataLength >= 0 ? push.getInt(pos + BatchLayout.RECORDS) : -1;
                if (dataLength < 0 || dataLength > end - pos - BatchLayout.HEADER_SIZE || n < 0) {
                    countsKnown = false;
                    return;
                }
                b++;
                r += n;
                pos += BatchLayout.HEADER_SIZE + dataLength;
            }
            batches += b;
            records += r;
        }

        /** Adds the readable bytes of a flush buffer (the next bytes of the file) to the checksum. */
        void written(ByteBuf buf) {
            for (ByteBuffer b : buf.nioBuffers()) crc.update(b);
        }

        FileContents result() {
            return new FileContents(countsKnown ? batches : UNKNOWN, countsKnown ? records : UNKNOWN, crc.getValue());
        }
    }
}
