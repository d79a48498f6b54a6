package io.estuary.tests;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * The jobs every shuffle implementation must agree on. Each returns a checksum of its output; a test runs it on
 * native sort shuffle and on Estuary and compares.
 */
public final class ShuffleJobs {
    private ShuffleJobs() {}

    public static Map<String, Function<SparkSession, Checksum>> all() {
        Map<String, Function<SparkSession, Checksum>> jobs = new LinkedHashMap<>();
        jobs.put("groupByKey", ShuffleJobs::groupByKey);
        jobs.put("reduceByKey", ShuffleJobs::reduceByKey);
        jobs.put("sortByKey", ShuffleJobs::sortByKey);
        jobs.put("join", ShuffleJobs::join);
        jobs.put("repartitionWithEmptyPartitions", ShuffleJobs::repartitionWithEmptyPartitions);
        jobs.put("emptyRdd", ShuffleJobs::emptyRdd);
        jobs.put("recordLargerThanPushBuffer", ShuffleJobs::largeRecords);
        jobs.put("twoThousandReducePartitions", ShuffleJobs::twoThousandPartitions);
        jobs.put(TWENTY_THOUSAND_PARTITIONS, ShuffleJobs::twentyThousandPartitions);
        jobs.put("sqlAggregation", ShuffleJobs::sqlAggregation);
        jobs.put("sqlJoin", ShuffleJobs::sqlJoin);
        jobs.put("sqlSkewJoinSplitByMapRanges", ShuffleJobs::sqlSkewJoin);
        jobs.put("sqlLocalShuffleReader", ShuffleJobs::sqlLocalShuffleReader);
        jobs.put("sqlGlobalLimitWithoutLocalLimit", ShuffleJobs::sqlGlobalLimitWithoutLocalLimit);
        jobs.put("kryoSerializedShuffle", ShuffleJobs::kryoShuffle);
        jobs.put("mapTaskFailsOnceThenSucceeds", ShuffleJobs::mapTaskFailsOnce);
        return jobs;
    }

    static JavaSparkContext jsc(SparkSession s) {
        return JavaSparkContext.fromSparkContext(s.sparkContext());
    }

    public static JavaPairRDD<Integer, Long> pairs(SparkSession s, int n, int keys, int slices) {
        List<Integer> seeds = new ArrayList<>();
        for (int i = 0; i < slices; i++) seeds.add(i);
        return jsc(s).parallelize(seeds, slices).flatMapToPair(slice -> {
            List<Tuple2<Integer, Long>> out = new ArrayList<>();
            for (int i = slice; i < n; i += slices) out.add(new Tuple2<>((int) ((i * 2654435761L) % keys), (long) i));
            return out.iterator();
        });
    }

    static Checksum groupByKey(SparkSession s) {
        return Checksum.of(pairs(s, 200_000, 5_000, 6).groupByKey(7).map(kv -> {
            long sum = 0;
            long n = 0;
            for (long v : kv._2()) {
                sum += v;
                n++;
            }
            return kv._1() + ":" + n + ":" + sum;
        }));
    }

    static Checksum reduceByKey(SparkSession s) {
        return Checksum.of(
                pairs(s, 300_000, 20_000, 5).reduceByKey(Long::sum, 9).map(Tuple2::toString));
    }

    static Checksum sortByKey(SparkSession s) {
        JavaPairRDD<Integer, Long> sorted = pairs(s, 100_000, 1_000_000, 4).sortByKey(true, 6);
        // The output must be sorted across and within partitions: each partition reports its range.
        List<long[]> ranges = sorted.mapPartitionsWithIndex(
                        (idx, it) -> {
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
                            return java.util.Collections.singletonList(new long[] {idx, n, first, last})
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

    static Checksum join(SparkSession s) {
        JavaPairRDD<Integer, Long> left = pairs(s, 50_000, 10_000, 4);
        JavaPairRDD<Integer, String> right = pairs(s, 20_000, 10_000, 3).mapValues(v -> "r" + v);
        return Checksum.of(left.join(right, 8).map(Tuple2::toString));
    }

    static Checksum repartitionWithEmptyPartitions(SparkSession s) {
        JavaRDD<String> few = jsc(s).parallelize(Arrays.asList("a", "b", "c", "d", "e", "f", "g"), 3);
        return Checksum.of(few.repartition(40));
    }

    static Checksum emptyRdd(SparkSession s) {
        JavaPairRDD<Integer, Long> none =
                jsc(s).<Tuple2<Integer, Long>>parallelize(new ArrayList<>(), 4).mapToPair(t -> t);
        Checksum a = Checksum.of(none.reduceByKey(Long::sum, 5).map(Tuple2::toString));
        Checksum b = Checksum.of(jsc(s).<Tuple2<Integer, Long>>emptyRDD()
                .mapToPair(t -> t)
                .groupByKey(3)
                .map(Tuple2::toString));
        return new Checksum(a.count + b.count, a.sum + b.sum);
    }

    static Checksum largeRecords(SparkSession s) {
        return Checksum.of(jsc(s).parallelize(Arrays.asList(0, 1, 2, 3, 4, 5), 3)
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

    static Checksum twoThousandPartitions(SparkSession s) {
        return Checksum.of(
                pairs(s, 100_000, 50_000, 4).reduceByKey(Long::sum, 2000).map(Tuple2::toString));
    }

    public static final String TWENTY_THOUSAND_PARTITIONS = "twentyThousandPartitionsJavaSerialized";

    /**
     * Every map writes to each of 20,000 partitions through Java serialization (one serialization stream per
     * partition): what a map task buffers must not grow with the partition count. The reduce side reads the
     * partitions in 4 tasks (a narrow coalesce) to keep the test short.
     */
    static Checksum twentyThousandPartitions(SparkSession s) {
        return Checksum.of(pairs(s, 200_000, 200_000, 4)
                .partitionBy(new org.apache.spark.HashPartitioner(20_000))
                .map(Tuple2::toString)
                .coalesce(4));
    }

    static Checksum sqlAggregation(SparkSession s) {
        Dataset<Row> df = s.range(0, 300_000).selectExpr("id % 2000 as k", "id as v", "cast(id % 7 as string) as t");
        Dataset<Row> agg = df.groupBy("k", "t")
                .agg(org.apache.spark.sql.functions.sum("v"), org.apache.spark.sql.functions.count("v"));
        List<Row> rows = agg.collectAsList();
        // The 16 shuffle partitions hold far less than AQE's advisory size: it coalesces them.
        AqePlans.require(agg, "coalesced shuffle read", r -> r.hasCoalescedPartition());
        return Checksum.ofLocal(rows);
    }

    static Checksum sqlJoin(SparkSession s) {
        Dataset<Row> a = s.range(0, 200_000).selectExpr("id % 5000 as k", "id as v");
        Dataset<Row> b = s.range(0, 20_000).selectExpr("id % 5000 as k", "concat('x', id) as w");
        return Checksum.ofLocal(a.join(b, "k")
                .groupBy("k")
                .agg(org.apache.spark.sql.functions.count("w"), org.apache.spark.sql.functions.sum("v"))
                .collectAsList());
    }

    /**
     * A join where one key holds most rows. AQE's skew handling splits the skewed partition into map ranges, so
     * readers read sub-ranges of maps (where RSS readers have doubled rows before).
     */
    static Checksum sqlSkewJoin(SparkSession s) {
        String[][] settings = {
            {"spark.sql.adaptive.skewJoin.enabled", "true"},
            {"spark.sql.adaptive.forceOptimizeSkewedJoin", "true"},
            {"spark.sql.adaptive.skewJoin.skewedPartitionFactor", "2"},
            {"spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "10k"},
            {"spark.sql.adaptive.advisoryPartitionSizeInBytes", "10k"},
            {"spark.sql.adaptive.coalescePartitions.enabled", "false"}
        };
        for (String[] kv : settings) s.conf().set(kv[0], kv[1]);
        try {
            Dataset<Row> big = s.range(0, 300_000, 1, 8)
                    .selectExpr("case when id % 10 < 8 then 0 else id % 1000 end as k", "id as v");
            Dataset<Row> small = s.range(0, 1000, 1, 2).selectExpr("id as k", "concat('w', id) as w");
            Dataset<Row> agg = big.join(small, "k").selectExpr("k", "v", "w");
            List<Row> rows = agg.collectAsList();
            AqePlans.require(agg, "skew-split shuffle read", r -> r.hasSkewedPartition());
            return Checksum.ofLocal(rows);
        } finally {
            for (String[] kv : settings) s.conf().unset(kv[0]);
        }
    }

    /**
     * A join planned as a sort-merge join that AQE turns into a broadcast join once it sees how small one side is:
     * the other side's map outputs are then read by a local shuffle reader, map by map (map-range reads).
     */
    static Checksum sqlLocalShuffleReader(SparkSession s) {
        String[][] settings = {
            {"spark.sql.adaptive.autoBroadcastJoinThreshold", "10m"},
            {"spark.sql.adaptive.localShuffleReader.enabled", "true"}
        };
        for (String[] kv : settings) s.conf().set(kv[0], kv[1]);
        try {
            Dataset<Row> big = s.range(0, 200_000, 1, 6).selectExpr("id % 1000 as k", "id as v");
            Dataset<Row> small = s.range(0, 1000, 1, 2).selectExpr("id as k", "concat('w', id % 97) as w");
            Dataset<Row> agg = big.join(small, "k")
                    .groupBy("w")
                    .agg(org.apache.spark.sql.functions.count("v"), org.apache.spark.sql.functions.sum("v"));
            List<Row> rows = agg.collectAsList();
            AqePlans.require(agg, "local shuffle read", r -> r.isLocalRead());
            return Checksum.ofLocal(rows);
        } finally {
            for (String[] kv : settings) s.conf().unset(kv[0]);
        }
    }

    /**
     * Global limits that lack a local limit below them (built by hand: a runaway limit that gathers the whole table
     * into one reducer). With Estuary's SQL extensions in the session, the optimized plans must have the local limit.
     */
    static Checksum sqlGlobalLimitWithoutLocalLimit(SparkSession s) {
        Dataset<Row> table = s.range(0, 200_000, 1, 8).selectExpr("id", "id % 13 as k");
        org.apache.spark.sql.catalyst.expressions.Expression n =
                org.apache.spark.sql.catalyst.expressions.Literal.create(
                        100, org.apache.spark.sql.types.DataTypes.IntegerType);
        Dataset<Row> top = datasetOf(
                s,
                new org.apache.spark.sql.catalyst.plans.logical.GlobalLimit(
                        n,
                        table.orderBy(org.apache.spark.sql.functions.desc("id"))
                                .queryExecution()
                                .analyzed()));
        Dataset<Row> any = datasetOf(
                s,
                new org.apache.spark.sql.catalyst.plans.logical.GlobalLimit(
                        n, table.queryExecution().analyzed()));
        List<Row> rows = new ArrayList<>(top.collectAsList());
        long anyCount = any.count();
        rows.add(org.apache.spark.sql.RowFactory.create("rows of the unordered limit", anyCount));
        for (Dataset<Row> ds : Arrays.asList(top, any)) {
            if (!runawayLimits(ds.queryExecution().analyzed())) {
                throw new IllegalStateException("the test's plan has no runaway limit:\n"
                        + ds.queryExecution().analyzed());
            }
            boolean extended = s.conf().get("spark.sql.extensions", "").contains("EstuarySqlExtensions");
            if (extended && runawayLimits(ds.queryExecution().optimizedPlan())) {
                throw new IllegalStateException("Estuary's SQL extension left a global limit without a local limit:\n"
                        + ds.queryExecution().optimizedPlan());
            }
        }
        return Checksum.ofLocal(rows);
    }

    /**
     * A DataFrame of a hand-built logical plan: {@code Dataset.ofRows}, which Spark 4 moved to its "classic"
     * package (this source is compiled against Spark 3 and 4 alike, so it is looked up).
     */
    @SuppressWarnings("unchecked")
    static Dataset<Row> datasetOf(SparkSession s, org.apache.spark.sql.catalyst.plans.logical.LogicalPlan plan) {
        for (String cls : new String[] {"org.apache.spark.sql.Dataset", "org.apache.spark.sql.classic.Dataset"}) {
            try {
                for (java.lang.reflect.Method m : Class.forName(cls).getMethods()) {
                    Class<?>[] p = m.getParameterTypes();
                    if (m.getName().equals("ofRows") && p.length == 2 && p[0].isInstance(s) && p[1].isInstance(plan)) {
                        return (Dataset<Row>) m.invoke(null, s, plan);
                    }
                }
            } catch (ClassNotFoundException e) {
                // not this Spark's layout: try the next
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("Dataset.ofRows failed", e);
            }
        }
        throw new IllegalStateException("this Spark has no Dataset.ofRows(session, plan)");
    }

    /** Whether some global limit in the plan has no local limit right below it. */
    static boolean runawayLimits(org.apache.spark.sql.catalyst.plans.logical.LogicalPlan plan) {
        if (plan instanceof org.apache.spark.sql.catalyst.plans.logical.GlobalLimit
                && !(plan.children().head() instanceof org.apache.spark.sql.catalyst.plans.logical.LocalLimit)) {
            return true;
        }
        for (org.apache.spark.sql.catalyst.plans.logical.LogicalPlan c :
                scala.collection.JavaConverters.seqAsJavaList(plan.children())) {
            if (runawayLimits(c)) return true;
        }
        return false;
    }

    /** An RDD shuffle with Kryo, whose serialized records can be cut and concatenated (the shared-stream path). */
    @SuppressWarnings("unchecked")
    static Checksum kryoShuffle(SparkSession s) {
        JavaPairRDD<Integer, Long> input = pairs(s, 200_000, 10_000, 4);
        org.apache.spark.rdd.ShuffledRDD<Integer, Long, Long> shuffled = new org.apache.spark.rdd.ShuffledRDD<>(
                input.rdd(),
                new org.apache.spark.HashPartitioner(6),
                scala.reflect.ClassTag$.MODULE$.apply(Integer.class),
                scala.reflect.ClassTag$.MODULE$.apply(Long.class),
                scala.reflect.ClassTag$.MODULE$.apply(Long.class));
        shuffled.setSerializer(
                new org.apache.spark.serializer.KryoSerializer(s.sparkContext().getConf()));
        return Checksum.of(new JavaPairRDD<Integer, Long>(
                        (org.apache.spark.rdd.RDD) shuffled,
                        scala.reflect.ClassTag$.MODULE$.apply(Integer.class),
                        scala.reflect.ClassTag$.MODULE$.apply(Long.class))
                .map(Tuple2::toString));
    }

    static Checksum mapTaskFailsOnce(SparkSession s) {
        JavaPairRDD<Integer, Long> flaky = pairs(s, 100_000, 3_000, 4)
                .mapPartitionsToPair(
                        it -> {
                            TaskContext ctx = TaskContext.get();
                            boolean failThisOne = ctx.partitionId() == 1 && ctx.attemptNumber() == 0;
                            List<Tuple2<Integer, Long>> out = new ArrayList<>();
                            it.forEachRemaining(out::add);
                            Iterator<Tuple2<Integer, Long>> inner = out.iterator();
                            return new Iterator<Tuple2<Integer, Long>>() {
                                int seen;

                                @Override
                                public boolean hasNext() {
                                    return inner.hasNext();
                                }

                                @Override
                                public Tuple2<Integer, Long> next() {
                                    // Fail halfway, after the writer has pushed some batches of this attempt.
                                    if (failThisOne && ++seen == out.size() / 2) {
                                        throw new IllegalStateException("injected failure of map 1, attempt 0");
                                    }
                                    return inner.next();
                                }
                            };
                        },
                        true);
        return Checksum.of(flaky.reduceByKey(Long::sum, 5).map(Tuple2::toString));
    }
}
