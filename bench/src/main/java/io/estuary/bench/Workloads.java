package io.estuary.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

/** Deterministic record generators and order-independent checksums shared by the quickstart and the benchmark. */
final class Workloads {
    private Workloads() {}

    /** Count and checksum of a set of records. */
    static final class Sum implements java.io.Serializable {
        final long count;
        final long sum;

        Sum(long count, long sum) {
            this.count = count;
            this.sum = sum;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Sum && ((Sum) o).count == count && ((Sum) o).sum == sum;
        }

        @Override
        public int hashCode() {
            return Long.hashCode(count ^ sum);
        }

        @Override
        public String toString() {
            return count + " rows / " + Long.toHexString(sum);
        }
    }

    static long mix(long key, byte[] value) {
        long h = key * 0x9E3779B97F4A7C15L + Arrays.hashCode(value);
        h ^= h >>> 31;
        return h * 0xBF58476D1CE4E5B9L;
    }

    /** {@code records} 100-byte records (an 8-byte key and 92 bytes of value) spread over {@code maps} tasks. */
    static JavaPairRDD<Long, byte[]> records(JavaSparkContext sc, long records, int maps, long seed) {
        List<Integer> slices = new ArrayList<>();
        for (int i = 0; i < maps; i++) slices.add(i);
        return sc.parallelize(slices, maps).flatMapToPair(slice -> {
            long n = records / maps + (slice < records % maps ? 1 : 0);
            Random r = new Random(seed * 1_000_003L + slice);
            return new Iterator<Tuple2<Long, byte[]>>() {
                long i;

                @Override
                public boolean hasNext() {
                    return i < n;
                }

                @Override
                public Tuple2<Long, byte[]> next() {
                    i++;
                    byte[] v = new byte[92];
                    r.nextBytes(v);
                    return new Tuple2<>(r.nextLong(), v);
                }
            };
        });
    }

    static Sum sum(JavaPairRDD<Long, byte[]> rdd) {
        long[] r = rdd.mapPartitions((Iterator<Tuple2<Long, byte[]>> it) -> {
                    long c = 0;
                    long s = 0;
                    while (it.hasNext()) {
                        Tuple2<Long, byte[]> t = it.next();
                        c++;
                        s += mix(t._1(), t._2());
                    }
                    return java.util.Collections.singletonList(new long[] {c, s})
                            .iterator();
                })
                .reduce((a, b) -> new long[] {a[0] + b[0], a[1] + b[1]});
        return new Sum(r[0], r[1]);
    }

    /** Hash-partitions the records: a plain shuffle of every byte. */
    static JavaPairRDD<Long, byte[]> shuffle(JavaPairRDD<Long, byte[]> rdd, int reducers) {
        return rdd.partitionBy(new HashPartitioner(reducers));
    }

    /** Sorts the records by key (TeraSort-like) and checks the order while summing. */
    static Sum sortAndCheck(JavaPairRDD<Long, byte[]> rdd, int reducers) {
        JavaPairRDD<Long, byte[]> sorted = rdd.sortByKey(true, reducers);
        JavaRDD<long[]> parts = sorted.mapPartitions((Iterator<Tuple2<Long, byte[]>> it) -> {
            long c = 0;
            long s = 0;
            long prev = Long.MIN_VALUE;
            while (it.hasNext()) {
                Tuple2<Long, byte[]> t = it.next();
                if (t._1() < prev) throw new IllegalStateException("output not sorted");
                prev = t._1();
                c++;
                s += mix(t._1(), t._2());
            }
            return java.util.Collections.singletonList(new long[] {c, s}).iterator();
        });
        long[] r = parts.reduce((a, b) -> new long[] {a[0] + b[0], a[1] + b[1]});
        return new Sum(r[0], r[1]);
    }
}
