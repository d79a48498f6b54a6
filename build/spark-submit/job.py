"""Shuffles through Estuary, submitted with spark-submit, each checked against counts and sums known in advance:
reduceByKey and groupByKey, then a shuffle into 20,000 partitions (a map task's memory must not grow with the
number of partitions; the executors have 512 MB). Prints CHECK OK or CHECK FAILED with what differed."""
import sys
from operator import add

from pyspark import SparkContext
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

sc = SparkContext.getOrCreate()
problems = []
try:
    n = 200_000
    pairs = sc.parallelize(range(n), 4).map(lambda i: (i % 1000, i))
    reduced = dict(pairs.reduceByKey(add, 7).collect())
    if len(reduced) != 1000 or sum(reduced.values()) != n * (n - 1) // 2:
        problems.append("reduceByKey: %d keys, sum %d" % (len(reduced), sum(reduced.values())))
    grouped = pairs.groupByKey(5).mapValues(len).collect()
    if len(grouped) != 1000 or sum(c for _, c in grouped) != n:
        problems.append("groupByKey: %d keys, %d values" % (len(grouped), sum(c for _, c in grouped)))

    # 20,000 reduce partitions: every map task writes to all of them (its memory must not grow with that), and
    # the reducers find every row once, unchanged. SQL, so the rows never pass through Python; AQE then reads the
    # tiny partitions in a few coalesced tasks instead of 20,000.
    spark = SparkSession(sc)
    spark.conf.set("spark.sql.shuffle.partitions", "20000")
    spark.conf.set("spark.sql.adaptive.enabled", "true")
    wide_n = 2_000_000
    wide = (spark.range(0, wide_n, 1, 8)
            .select((F.col("id") * 7919 % wide_n).alias("k"), F.col("id").alias("v"))
            .repartition("k"))
    row = wide.agg(F.count(F.lit(1)).alias("n"), F.sum("k").alias("ks"), F.sum("v").alias("vs")).collect()[0]
    expected = wide_n * (wide_n - 1) // 2
    if row.n != wide_n or row.ks != expected or row.vs != expected:
        problems.append("20,000 partitions: %d rows, key sum %d, value sum %d (expected %d rows, sums %d)"
                        % (row.n, row.ks, row.vs, wide_n, expected))

    manager = sc._jsc.sc().env().shuffleManager().getClass().getName()
    print("shuffle manager:", manager)
    if "Estuary" not in manager:
        problems.append("the shuffle manager is " + manager)
    print("CHECK OK" if not problems else "CHECK FAILED: " + "; ".join(problems))
finally:
    sc.stop()
sys.exit(0)
