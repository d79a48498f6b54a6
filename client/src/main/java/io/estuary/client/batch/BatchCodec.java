package io.estuary.client.batch;

import io.estuary.common.util.EstuaryException;
import java.nio.ByteBuffer;
import java.util.zip.CRC32;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4FastDecompressor;

/** Encodes serialized records into a batch (header + possibly compressed bytes) and decodes it back. */
public final class BatchCodec {
  private static final LZ4Factory LZ4 = LZ4Factory.fastestInstance();

  private final int codec;
  private final LZ4Compressor compressor;
  private final LZ4FastDecompressor decompressor = LZ4.fastDecompressor();

  public BatchCodec(String codecName) {
    this.codec = "lz4".equalsIgnoreCase(codecName) ? BatchHeader.CODEC_LZ4 : BatchHeader.CODEC_NONE;
    this.compressor = codec == BatchHeader.CODEC_LZ4 ? LZ4.fastCompressor() : null;
  }

  /** A complete batch: header and data, ready to push. */
  public byte[] encode(int mapId, int attemptId, int batchId, byte[] raw, int offset, int length) {
    byte[] out;
    int dataLength;
    int usedCodec = codec;
    if (codec == BatchHeader.CODEC_LZ4) {
      out = new byte[BatchHeader.SIZE + compressor.maxCompressedLength(length)];
      dataLength = compressor.compress(raw, offset, length, out, BatchHeader.SIZE);
      if (dataLength >= length) { // incompressible: store it as it is
        usedCodec = BatchHeader.CODEC_NONE;
      }
    } else {
      out = null;
      dataLength = length;
    }
    if (usedCodec == BatchHeader.CODEC_NONE) {
      out = new byte[BatchHeader.SIZE + length];
      System.arraycopy(raw, offset, out, BatchHeader.SIZE, length);
      dataLength = length;
    }
    CRC32 crc = new CRC32();
    crc.update(out, BatchHeader.SIZE, dataLength);
    ByteBuffer h = ByteBuffer.wrap(out, 0, BatchHeader.SIZE);
    h.putInt(mapId).putInt(attemptId).putInt(batchId).putInt(usedCodec).putInt(length).putInt(dataLength)
        .putInt((int) crc.getValue());
    if (out.length == BatchHeader.SIZE + dataLength) return out;
    byte[] exact = new byte[BatchHeader.SIZE + dataLength];
    System.arraycopy(out, 0, exact, 0, exact.length);
    return exact;
  }

  /**
   * Checks and decodes the data of a batch whose header fields were already read; {@code data} holds
   * {@code dataLength} bytes at {@code offset}.
   */
  public byte[] decode(int codecId, int rawLength, int checksum, byte[] data, int offset, int dataLength,
      String where) {
    CRC32 crc = new CRC32();
    crc.update(data, offset, dataLength);
    if ((int) crc.getValue() != checksum) {
      throw new EstuaryException("corrupt batch in " + where + ": checksum mismatch over " + dataLength + " bytes");
    }
    switch (codecId) {
      case BatchHeader.CODEC_NONE: {
        byte[] out = new byte[dataLength];
        System.arraycopy(data, offset, out, 0, dataLength);
        return out;
      }
      case BatchHeader.CODEC_LZ4: {
        byte[] out = new byte[rawLength];
        decompressor.decompress(data, offset, out, 0, rawLength);
        return out;
      }
      default:
        throw new EstuaryException("corrupt batch in " + where + ": unknown codec " + codecId);
    }
  }
}
