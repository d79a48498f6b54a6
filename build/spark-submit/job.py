"""Shuffles through Estuary, submitted with spark-submit, each checked against counts and sums known in advance:
reduceByKey and groupByKey, then a shuffle into 20,000 partitions (a map task's memory must not grow with the
number of partitions; the executors have 512 MB). Prints CHECK OK or CHECK FAILED with what differed."""
import sys
from operator import add

from pyspark import SparkContext



def partition_stats(rows):
    count = key_sum = value_sum = 0
    for k, v in rows:
        count += 1
        key_sum += k
        value_sum += v
    yield count, key_sum, value_sum


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

    # 20,000 reduce partitions: every record lands once (count), none changed (sum of keys and of values), and the
    # partitions really are that many.
    wide_n, parts = 1_000_000, 20_000
    wide = sc.parallelize(range(wide_n), 8).map(lambda i: (i * 7919 % wide_n, i)).partitionBy(parts)
    stats = wide.mapPartitions(partition_stats)
    count, key_sum, value_sum = stats.reduce(lambda a, b: (a[0] + b[0], a[1] + b[1], a[2] + b[2]))
    expected = wide_n * (wide_n - 1) // 2
    if wide.getNumPartitions() != parts or count != wide_n or key_sum != expected or value_sum != expected:
        problems.append("20,000 partitions: %d partitions, %d rows, key sum %d, value sum %d (expected %d rows, sums %d)"
                        % (wide.getNumPartitions(), count, key_sum, value_sum, wide_n, expected))

    manager = sc._jsc.sc().env().shuffleManager().getClass().getName()
    print("shuffle manager:", manager)
    if "Estuary" not in manager:
        problems.append("the shuffle manager is " + manager)
    print("CHECK OK" if not problems else "CHECK FAILED: " + "; ".join(problems))
finally:
    sc.stop()
sys.exit(0)
