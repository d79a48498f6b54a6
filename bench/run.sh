#!/usr/bin/env bash
# The benchmark: every workload on Spark's native sort shuffle, on Estuary with replicas (its default) and on
# Estuary with one copy (a local master and two workers), in one invocation; each in a fresh driver JVM. Prints each
# time and the Estuary/native ratios, fails on a checksum mismatch.
# Usage: bench/run.sh [scale] [repeats]   (scale 1 = TeraSort-like on 2 GB; 0.1 for a quick look)
# With repeats > 1, native and Estuary runs alternate and the best time of each workload counts (this machine's
# run-to-run noise is larger than some of the differences measured).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scale=${1:-1}
repeats=${2:-1}
[ -d dist/jars ] && [ -f bench/target/classes/io/estuary/bench/ShuffleBenchmark.class ] || build/make-dist.sh
work=$(mktemp -d /tmp/estuary-bench.XXXXXX)
trap 'build/local-cluster.sh stop "$work"; rm -rf "$work"' EXIT
build/local-cluster.sh start "$work"
# The drivers authenticate as the cluster expects (build/lib/cluster.sh; SparkConf reads spark.* system properties).
# shellcheck source=build/lib/cluster.sh
. build/lib/cluster.sh
auth=$(cluster_spark_auth_opts)
driver() { SPARK_LOCAL_IP=127.0.0.1 build/spark-driver.sh -Djava.io.tmpdir="$work" "$auth" io.estuary.bench.ShuffleBenchmark "$@"; }
# Estuary with one copy of each partition.
single() { SPARK_LOCAL_IP=127.0.0.1 build/spark-driver.sh -Djava.io.tmpdir="$work" "$auth" \
  -Dspark.estuary.client.push.replicate=false io.estuary.bench.ShuffleBenchmark "$@"; }
# Estuary servers are long-running: warm them up (JIT) with a job of their own first, as a production cluster is.
# Each measured driver is a fresh JVM, as executors are, with the same warm-up job before timing.
echo "Warming up the Estuary servers"
SPARK_LOCAL_IP=127.0.0.1 build/spark-driver.sh "$auth" io.estuary.bench.QuickstartJob 127.0.0.1:19097 0.5 >/dev/null 2>&1
echo "Each workload on native sort shuffle, then on Estuary (127.0.0.1:19097), scale $scale"
nat=""
est=""
one=""
for i in $(seq 1 "$repeats"); do
  [ "$repeats" -gt 1 ] && echo "run $i of $repeats"
  driver run native - "$scale" "$work/native-$i.tsv"
  driver run estuary 127.0.0.1:19097 "$scale" "$work/estuary-$i.tsv"
  single run estuary 127.0.0.1:19097 "$scale" "$work/single-$i.tsv"
  nat=${nat:+$nat,}$work/native-$i.tsv
  est=${est:+$est,}$work/estuary-$i.tsv
  one=${one:+$one,}$work/single-$i.tsv
done
driver compare "$nat" "$est" "$one" | tee "$work/table.txt"
mkdir -p bench/results
cp "$work/table.txt" "bench/results/$(date +%Y%m%d-%H%M%S)-scale$scale-x$repeats.txt"
