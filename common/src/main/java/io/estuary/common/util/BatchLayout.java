package io.estuary.common.util;

/**
 * Where the fields workers need lie in the header of a pushed batch. Clients own the full layout (see the client's
 * {@code BatchHeader}); workers read only the map id, the data length and the record count, to index which maps'
 * batches lie where in a partition file and to record what a committed file holds. Changing these offsets is a
 * protocol change.
 *
 * <p>Constants and static functions only, safe from any thread; never holds or releases a buffer.
 */
public final class BatchLayout {
    private BatchLayout() {}

    /** Bytes of a batch header; the batch's data follows it. */
    public static final int HEADER_SIZE = 32;
    /** Offset of the int map id (the map task's index). */
    public static final int MAP_ID = 0;
    /** Offset of the int count of data bytes after the header. */
    public static final int DATA_LENGTH = 20;
    /** Offset of the int count of records in the batch. */
    public static final int RECORDS = 24;
}
