package io.estuary.tests;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

/**
 * The shuffle jobs of ../../tests' ShuffleJobs for Spark 1.6 and 2.4, written against the Java API both share (no
 * flatMap or mapPartitions: their Java signatures changed in 2.0). Each returns a checksum of its output.
 */
public final class LegacyJobs {
    private LegacyJobs() {}

    public static Map<String, Function<JavaSparkContext, Checksum>> all() {
        Map<String, Function<JavaSparkContext, Checksum>> jobs = new LinkedHashMap<>();
        jobs.put("groupByKey", LegacyJobs::groupByKey);
        jobs.put("reduceByKey", LegacyJobs::reduceByKey);
        jobs.put("sortByKey", LegacyJobs::sortByKey);
        jobs.put("join", LegacyJobs::join);
        jobs.put("repartitionWithEmptyPartitions", LegacyJobs::repartitionWithEmptyPartitions);
        jobs.put("recordLargerThanPushBuffer", LegacyJobs::largeRecords);
        jobs.put("twoThousandReducePartitions", LegacyJobs::twoThousandPartitions);
        jobs.put("mapTaskFailsOnceThenSucceeds", LegacyJobs::mapTaskFailsOnce);
        return jobs;
    }

    static long key(long i, int keys) {
        return (i * 2654435761L) % keys;
    }

    /** {@code n} (key, value) pairs in {@code slices} map partitions, each slice a contiguous range of values. */
    public static JavaPairRDD<Integer, Long> pairs(JavaSparkContext sc, int n, int keys, int slices) {
        List<Integer> values = new ArrayList<>(n);
        for (int i = 0; i < n; i++) values.add(i);
        return sc.parallelize(values, slices).mapToPair(i -> new Tuple2<>((int) key(i, keys), (long) i));
    }

    static Checksum groupByKey(JavaSparkContext sc) {
        return Checksum.of(pairs(sc, 200_000, 5_000, 6).groupByKey(7).map(kv -> {
            long sum = 0;
            long n = 0;
            for (long v : kv._2()) {
                sum += v;
                n++;
            }
            return kv._1() + ":" + n + ":" + sum;
        }));
    }

    static Checksum reduceByKey(JavaSparkContext sc) {
        return Checksum.of(
                pairs(sc, 300_000, 20_000, 5).reduceByKey(Long::sum, 9).map(Tuple2::toString));
    }

    static Checksum sortByKey(JavaSparkContext sc) {
        JavaPairRDD<Integer, Long> sorted = pairs(sc, 100_000, 1_000_000, 4).sortByKey(true, 6);
        List<long[]> ranges = sorted.mapPartitionsWithIndex(
                        (Integer idx, java.util.Iterator<Tuple2<Integer, Long>> it) -> {
                            long first = Long.MIN_VALUE;
                            long last = Long.MIN_VALUE;
                            long n = 0;
                            while (it.hasNext()) {
                                int k = it.next()._1();
                                if (k < last) throw new IllegalStateException("partition " + idx + " is not sorted");
                                if (n == 0) first = k;
                                last = k;
                                n++;
                            }
                            return Collections.singletonList(new long[] {idx, n, first, last})
                                    .iterator();
                        },
                        true)
                .collect();
        long prevLast = Long.MIN_VALUE;
        for (long[] r : ranges) {
            if (r[1] == 0) continue;
            if (r[2] < prevLast) throw new IllegalStateException("partitions overlap at partition " + r[0]);
            prevLast = r[3];
        }
        return Checksum.of(sorted.map(Tuple2::toString));
    }

    static Checksum join(JavaSparkContext sc) {
        JavaPairRDD<Integer, Long> left = pairs(sc, 50_000, 10_000, 4);
        JavaPairRDD<Integer, String> right = pairs(sc, 20_000, 10_000, 3).mapValues(v -> "r" + v);
        return Checksum.of(left.join(right, 8).map(Tuple2::toString));
    }

    static Checksum repartitionWithEmptyPartitions(JavaSparkContext sc) {
        JavaRDD<String> few = sc.parallelize(Arrays.asList("a", "b", "c", "d", "e", "f", "g"), 3);
        return Checksum.of(few.repartition(40));
    }

    static Checksum largeRecords(JavaSparkContext sc) {
        return Checksum.of(sc.parallelize(Arrays.asList(0, 1, 2, 3, 4, 5), 3)
                .mapToPair(i -> {
                    char[] c = new char[i % 2 == 0 ? 1_500_000 : 10];
                    Arrays.fill(c, (char) ('a' + i));
                    return new Tuple2<>(i % 3, new String(c));
                })
                .groupByKey(2)
                .map(kv -> {
                    long total = 0;
                    long h = 0;
                    for (String v : kv._2()) {
                        total += v.length();
                        h += Checksum.hash(v);
                    }
                    return kv._1() + ":" + total + ":" + h;
                }));
    }

    static Checksum twoThousandPartitions(JavaSparkContext sc) {
        return Checksum.of(
                pairs(sc, 100_000, 50_000, 4).reduceByKey(Long::sum, 2000).map(Tuple2::toString));
    }

    /** Map 1's first attempt fails halfway through its slice, after it has pushed some batches. */
    static Checksum mapTaskFailsOnce(JavaSparkContext sc) {
        JavaPairRDD<Integer, Long> flaky = pairs(sc, 100_000, 3_000, 4).mapToPair(kv -> {
            TaskContext ctx = TaskContext.get();
            if (ctx.partitionId() == 1 && ctx.attemptNumber() == 0 && kv._2() == 37_500L) {
                throw new IllegalStateException("injected failure of map 1, attempt 0");
            }
            return kv;
        });
        return Checksum.of(flaky.reduceByKey(Long::sum, 5).map(Tuple2::toString));
    }
}
