package io.estuary.client.batch;

import io.netty.buffer.ByteBuf;

/**
 * Every pushed batch starts with this header; the worker stores batches as they come, so readers find it again.
 * This class owns the layout: nothing else hard-codes an offset.
 *
 * <pre>
 *   int mapId        map task index
 *   int attemptId    which attempt of that map wrote it (only the attempt that ended first counts)
 *   int batchId      per map attempt, so a batch pushed twice (a retry whose first try landed) is read once
 *   int codec        0 = none, 1 = lz4, 2 = zstd
 *   int rawLength    bytes after decompression
 *   int dataLength   bytes that follow the header
 *   int records      records in the batch (for end-to-end counts)
 *   int checksum     CRC32 over the 28 header bytes before it and the data: a flipped bit anywhere is caught
 * </pre>
 */
public final class BatchHeader {
    private BatchHeader() {}

    public static final int SIZE = io.estuary.common.util.BatchLayout.HEADER_SIZE;
    /** Bytes of the header covered by the checksum (all but the checksum itself). */
    public static final int CHECKED = 28;

    public static final int CODEC_NONE = 0;
    public static final int CODEC_LZ4 = 1;
    public static final int CODEC_ZSTD = 2;

    public static int mapId(ByteBuf b, int at) {
        return b.getInt(at + io.estuary.common.util.BatchLayout.MAP_ID);
    }

    public static int attemptId(ByteBuf b, int at) {
        return b.getInt(at + 4);
    }

    public static int batchId(ByteBuf b, int at) {
        return b.getInt(at + 8);
    }

    public static int codec(ByteBuf b, int at) {
        return b.getInt(at + 12);
    }

    public static int rawLength(ByteBuf b, int at) {
        return b.getInt(at + 16);
    }

    public static int dataLength(ByteBuf b, int at) {
        return b.getInt(at + io.estuary.common.util.BatchLayout.DATA_LENGTH);
    }

    public static int records(ByteBuf b, int at) {
        return b.getInt(at + io.estuary.common.util.BatchLayout.RECORDS);
    }

    public static int checksum(ByteBuf b, int at) {
        return b.getInt(at + 28);
    }

    /** Writes every field but the checksum at {@code at}. */
    static void write(
            ByteBuf b,
            int at,
            int mapId,
            int attemptId,
            int batchId,
            int codec,
            int rawLength,
            int dataLength,
            int records) {
        b.setInt(at, mapId);
        b.setInt(at + 4, attemptId);
        b.setInt(at + 8, batchId);
        b.setInt(at + 12, codec);
        b.setInt(at + 16, rawLength);
        b.setInt(at + 20, dataLength);
        b.setInt(at + io.estuary.common.util.BatchLayout.RECORDS, records);
    }

    static void setChecksum(ByteBuf b, int at, int checksum) {
        b.setInt(at + 28, checksum);
    }
}
