package io.estuary.tests;

import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import org.apache.spark.api.java.JavaRDD;

/** Row count and an order-independent checksum (sum of 64-bit FNV-1a hashes of each row's text). */
public final class Checksum implements Serializable {
    public final long count;
    public final long sum;

    public Checksum(long count, long sum) {
        this.count = count;
        this.sum = sum;
    }

    public static long hash(String s) {
        long h = 0xcbf29ce484222325L;
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            h ^= b;
            h *= 0x100000001b3L;
        }
        return h;
    }

    public static <T> Checksum of(JavaRDD<T> rdd) {
        // mapPartitionsWithIndex: its Java signature is the same on every Spark line from 1.6 on (mapPartitions' is
        // not).
        long[] r = rdd.mapPartitionsWithIndex(
                        (Integer idx, Iterator<T> it) -> {
                            long c = 0;
                            long s = 0;
                            while (it.hasNext()) {
                                c++;
                                s += hash(String.valueOf(it.next()));
                            }
                            return java.util.Collections.singletonList(new long[] {c, s})
                                    .iterator();
                        },
                        false)
                .reduce((a, b) -> new long[] {a[0] + b[0], a[1] + b[1]});
        return new Checksum(r[0], r[1]);
    }

    public static Checksum ofLocal(Iterable<?> rows) {
        long c = 0;
        long s = 0;
        for (Object o : rows) {
            c++;
            s += hash(String.valueOf(o));
        }
        return new Checksum(c, s);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Checksum && ((Checksum) o).count == count && ((Checksum) o).sum == sum;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(count * 31 + sum);
    }

    @Override
    public String toString() {
        return count + " rows, checksum " + Long.toHexString(sum);
    }
}
