package io.estuary.client.batch;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.util.EstuaryException;
import io.netty.buffer.ByteBuf;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BatchCodecTest {
  private static byte[] roundTrip(BatchCodec codec, byte[] raw, int[] codecSeen) {
    ByteBuf b = codec.encode(3, 1, 7, raw, 0, raw.length);
    try {
      assertEquals(3, b.getInt(0));
      assertEquals(1, b.getInt(4));
      assertEquals(7, b.getInt(8));
      codecSeen[0] = b.getInt(12);
      ByteBuf out = codec.decode(b.getInt(12), b.getInt(16), b.getInt(24), b, BatchHeader.SIZE, b.getInt(20), "test");
      byte[] bytes = new byte[out.readableBytes()];
      out.getBytes(out.readerIndex(), bytes);
      return bytes;
    } finally {
      b.release();
    }
  }

  @Test
  void compressibleDataIsCompressedAndComesBack() {
    BatchCodec codec = new BatchCodec("lz4");
    byte[] raw = new byte[64 * 1024];
    for (int i = 0; i < raw.length; i++) raw[i] = (byte) (i % 13);
    int[] used = new int[1];
    for (int i = 0; i < 50; i++) {
      assertArrayEquals(raw, roundTrip(codec, raw, used));
      assertEquals(BatchHeader.CODEC_LZ4, used[0]);
    }
  }

  @Test
  void incompressibleDataStopsBeingTriedThenIsProbedAgain() {
    BatchCodec codec = new BatchCodec("lz4");
    byte[] random = new byte[16 * 1024];
    new Random(1).nextBytes(random);
    int[] used = new int[1];
    for (int i = 0; i < BatchCodec.GIVE_UP_AFTER + BatchCodec.SKIP; i++) {
      assertArrayEquals(random, roundTrip(codec, random, used));
      assertEquals(BatchHeader.CODEC_NONE, used[0]);
    }
    // The data turns compressible: the next probe finds out and compression resumes.
    byte[] zeros = new byte[16 * 1024];
    assertArrayEquals(zeros, roundTrip(codec, zeros, used));
    assertEquals(BatchHeader.CODEC_LZ4, used[0]);
  }

  @Test
  void corruptionIsDetected() {
    BatchCodec codec = new BatchCodec("lz4");
    byte[] raw = "some records".getBytes();
    ByteBuf b = codec.encode(0, 0, 0, raw, 0, raw.length);
    try {
      b.setByte(BatchHeader.SIZE + 2, b.getByte(BatchHeader.SIZE + 2) ^ 0x40);
      EstuaryException e = assertThrows(EstuaryException.class, () -> codec.decode(b.getInt(12), b.getInt(16),
          b.getInt(24), b, BatchHeader.SIZE, b.getInt(20), "partition 5"));
      assertTrue(e.getMessage().contains("checksum mismatch"), e.getMessage());
      assertTrue(e.getMessage().contains("partition 5"), e.getMessage());
    } finally {
      b.release();
    }
    assertFalse(Arrays.equals(raw, new byte[0]));
  }
}
