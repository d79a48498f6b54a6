#!/usr/bin/env bash
# The benchmark: every workload on Spark's native sort shuffle and on Estuary (a local master and two workers),
# in one invocation; each implementation in a fresh driver JVM. Prints each time and the Estuary/native ratio,
# fails on a checksum mismatch.
# Usage: bench/run.sh [scale]   (scale 1 = TeraSort-like on 2 GB; 0.1 for a quick look)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scale=${1:-1}
[ -d dist/jars ] && [ -f bench/target/classes/io/estuary/bench/ShuffleBenchmark.class ] || build/make-dist.sh
work=$(mktemp -d /tmp/estuary-bench.XXXXXX)
trap 'build/local-cluster.sh stop "$work"; rm -rf "$work"' EXIT
build/local-cluster.sh start "$work"
driver() { SPARK_LOCAL_IP=127.0.0.1 build/spark-driver.sh -Djava.io.tmpdir="$work" io.estuary.bench.ShuffleBenchmark "$@"; }
echo "Each workload on native sort shuffle, then on Estuary (127.0.0.1:19097), scale $scale"
driver run native - "$scale" "$work/native.tsv"
driver run estuary 127.0.0.1:19097 "$scale" "$work/estuary.tsv"
driver compare "$work/native.tsv" "$work/estuary.tsv" | tee "$work/table.txt"
mkdir -p bench/results
cp "$work/table.txt" "bench/results/$(date +%Y%m%d-%H%M%S)-scale$scale.txt"
