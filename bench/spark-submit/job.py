"""A shuffle through Estuary, submitted with spark-submit: reduceByKey and groupByKey, checked against sums known
in advance. Prints CHECK OK or CHECK FAILED."""
import sys
from operator import add

from pyspark import SparkContext

sc = SparkContext.getOrCreate()
try:
    n = 200_000
    pairs = sc.parallelize(range(n), 4).map(lambda i: (i % 1000, i))
    reduced = dict(pairs.reduceByKey(add, 7).collect())
    grouped = pairs.groupByKey(5).mapValues(len).collect()
    ok = (len(reduced) == 1000 and sum(reduced.values()) == n * (n - 1) // 2
          and len(grouped) == 1000 and sum(c for _, c in grouped) == n)
    manager = sc._jsc.sc().env().shuffleManager().getClass().getName()
    print("shuffle manager:", manager)
    print("CHECK OK" if ok and "Estuary" in manager else "CHECK FAILED")
finally:
    sc.stop()
sys.exit(0)
