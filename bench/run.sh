#!/usr/bin/env bash
# The benchmark: every workload on Spark's native sort shuffle, on Estuary with replicas (its default: authentication
# on, no TLS) and on Estuary with one copy (a local master and two workers), in one invocation; each in a fresh
# driver JVM. Then, unless BENCH_SECURITY=0, the same replicated runs on a cluster without authentication and on one
# with TLS on every port (and authentication): what security costs, side by side. Prints each time and the
# Estuary/native ratios, fails on a checksum mismatch.
# Usage: bench/run.sh [scale] [repeats]   (scale 1 = TeraSort-like on 2 GB; 0.1 for a quick look)
# With repeats > 1, native and Estuary runs alternate (the clusters in reverse order on even runs) and the best time
# of each workload counts (this machine's run-to-run noise is larger than some of the differences measured).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scale=${1:-1}
repeats=${2:-1}
security=${BENCH_SECURITY:-1}
{ [ -d dist/jars ] && [ -f bench/target/classes/io/estuary/bench/ShuffleBenchmark.class ]; } || build/make-dist.sh
work=$(mktemp -d /tmp/estuary-bench.XXXXXX)
cluster=""
trap '[ -n "$cluster" ] && build/local-cluster.sh stop "$cluster"; rm -rf "$work"' EXIT
# shellcheck source=build/lib/cluster.sh
. build/lib/cluster.sh
opts=()
# up NAME AUTH TLS: a fresh local cluster (build/local-cluster.sh) with that security, warmed up; sets opts to what
# its Spark drivers need (build/lib/cluster.sh; SparkConf reads spark.* system properties).
up() {
  [ -n "$cluster" ] && build/local-cluster.sh stop "$cluster" >/dev/null
  cluster=$work/cluster-$1
  export CLUSTER_AUTH=$2 CLUSTER_TLS=$3 CLUSTER_WORK=$cluster
  build/local-cluster.sh start "$cluster" >/dev/null
  opts=("-Djava.io.tmpdir=$work" "$(cluster_spark_auth_opts)")
  mapfile -t -O 2 opts < <(cluster_spark_tls_opts)
  # Estuary servers are long-running: warm them up (JIT) with a job of their own first, as a production cluster is.
  # Each measured driver is a fresh JVM, as executors are, with the same warm-up job before timing.
  SPARK_LOCAL_IP=127.0.0.1 build/spark-driver.sh "${opts[@]}" io.estuary.bench.QuickstartJob 127.0.0.1:19097 0.5 \
    >/dev/null 2>&1
}
driver() { SPARK_LOCAL_IP=127.0.0.1 build/spark-driver.sh "${opts[@]}" io.estuary.bench.ShuffleBenchmark "$@"; }
# Estuary with one copy of each partition.
single() { driver_opts=("${opts[@]}" -Dspark.estuary.client.push.replicate=false)
  SPARK_LOCAL_IP=127.0.0.1 build/spark-driver.sh "${driver_opts[@]}" io.estuary.bench.ShuffleBenchmark "$@"; }
echo "Each workload on native sort shuffle, then on Estuary (127.0.0.1:19097), scale $scale"
nat=""; est=""; one=""; open=""; tls=""
# measure CLUSTER RUN: the runs of one cluster configuration, their result files added to the lists above.
measure() {
  case $1 in
    default)
      up default true false
      driver run native - "$scale" "$work/native-$2.tsv"
      driver run estuary 127.0.0.1:19097 "$scale" "$work/estuary-$2.tsv"
      single run estuary 127.0.0.1:19097 "$scale" "$work/single-$2.tsv"
      nat=${nat:+$nat,}$work/native-$2.tsv
      est=${est:+$est,}$work/estuary-$2.tsv
      one=${one:+$one,}$work/single-$2.tsv
      ;;
    open)
      echo "Estuary without authentication"
      up open false false
      driver run estuary 127.0.0.1:19097 "$scale" "$work/open-$2.tsv"
      open=${open:+$open,}$work/open-$2.tsv
      ;;
    tls)
      echo "Estuary with TLS on every port (and authentication)"
      up tls true true
      driver run estuary 127.0.0.1:19097 "$scale" "$work/tls-$2.tsv"
      tls=${tls:+$tls,}$work/tls-$2.tsv
      ;;
  esac
}
for i in $(seq 1 "$repeats"); do
  [ "$repeats" -gt 1 ] && echo "run $i of $repeats"
  # Even runs take the clusters in the opposite order: the first cluster of a run (a cold page cache, a JIT-cold
  # machine) or the last (a full one) must not always be the same configuration.
  order=(default)
  [ "$security" = 1 ] && order=(default open tls)
  [ "$security" = 1 ] && [ $((i % 2)) = 0 ] && order=(tls open default)
  for c in "${order[@]}"; do measure "$c" "$i"; done
done
columns=("replicated=$est" "1-copy=$one")
[ "$security" = 1 ] && columns+=("no-auth=$open" "TLS=$tls")
driver compare "$nat" "${columns[@]}" | tee "$work/table.txt"
if [ "$security" = 1 ]; then
  # Authentication's and TLS's own cost: the default (replicated, authenticated) against each.
  python3 - "$work/table.txt" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and not l.startswith(("workload", "checksum"))]
print("\n%-52s %16s %16s" % ("workload", "auth / no-auth", "TLS / plain"))
for r in rows:
    # From the right (workload names hold spaces): native, replicated, ratio, 1-copy, ratio, no-auth, ratio, TLS,
    # ratio, checksum.
    if len(r) < 11: continue
    rep, noauth, tls = float(r[-9]), float(r[-5]), float(r[-3])
    if noauth > 0 and rep > 0:
        print("%-52s %15.2fx %15.2fx" % (" ".join(r[:-10]), rep / noauth, tls / rep))
PY
fi
mkdir -p bench/results
cp "$work/table.txt" "bench/results/$(date +%Y%m%d-%H%M%S)-scale$scale-x$repeats.txt"
