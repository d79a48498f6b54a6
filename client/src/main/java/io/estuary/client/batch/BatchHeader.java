package io.estuary.client.batch;

/**
 * Every pushed batch starts with this header; the worker stores batches as they come, so readers find it again.
 *
 * <pre>
 *   int mapId        map task index
 *   int attemptId    which attempt of that map wrote it (only the attempt that ended first counts)
 *   int batchId      per map attempt, so a batch pushed twice (a retry whose first try landed) is read once
 *   int codec        0 = none, 1 = lz4
 *   int rawLength    bytes after decompression
 *   int dataLength   bytes that follow the header
 *   int checksum     CRC32 of those bytes, checked when reading
 * </pre>
 */
public final class BatchHeader {
  private BatchHeader() {}

  public static final int SIZE = 28;

  public static final int CODEC_NONE = 0;
  public static final int CODEC_LZ4 = 1;
}
