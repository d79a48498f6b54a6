package io.estuary.client;

import io.estuary.client.read.ShuffleBatchReader;
import io.estuary.client.spec.ShuffleSpec;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.Random;

/**
 * Test records for the engine-neutral client: each is a 4-byte length and that many seeded random bytes, so a
 * reader can split batches back into records; and an order-independent checksum over them.
 */
final class FramedRecords {
    private FramedRecords() {}

    /** The record of map {@code map}, index {@code i}: {@code size} random bytes after their length. */
    static byte[] framed(int map, int i, int size) {
        return framed(map * 1_000_003L + i, size);
    }

    static byte[] framed(long seed, int size) {
        byte[] r = new byte[size];
        new Random(seed).nextBytes(r);
        return ByteBuffer.allocate(4 + size).putInt(size).put(r).array();
    }

    /** A record's share of the checksum (summed over records, so order does not matter). */
    static long hash(byte[] framed) {
        return java.util.Arrays.hashCode(framed) * 0x9E3779B97F4A7C15L;
    }

    /** Count and checksum of what partitions [start, end) of every map read back: {count, checksum}. */
    static long[] readAll(ShuffleClient client, ShuffleSpec spec, int start, int end) throws Exception {
        long count = 0;
        long sum = 0;
        try (ShuffleBatchReader r = new ShuffleBatchReader(client, spec, start, end, 0, spec.numMappers)) {
            ByteBuf b;
            while ((b = r.next()) != null) {
                while (b.isReadable()) {
                    byte[] rec = new byte[4 + b.getInt(b.readerIndex())];
                    b.readBytes(rec);
                    count++;
                    sum += hash(rec);
                }
            }
        }
        return new long[] {count, sum};
    }
}
