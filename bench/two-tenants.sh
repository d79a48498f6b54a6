#!/usr/bin/env bash
# Two tenants on one local cluster (a master and two workers, authentication and replicas on): a flooding tenant
# (user mallory, tenant flood: the TeraSort-like workload, its client ignoring CONGESTED) and a normal one (user carol,
# tenant etl: 200 small shuffles), each alone, then both at once. Prints each tenant's job time alone and together and
# the ratio; every output is checked against native sort shuffle's (the runs fail on a mismatch).
# The workers cap each application at BENCH_APP_RATE bytes per second (default 48m) and enforce it
# (estuary.worker.congestion.enforce); BENCH_ENFORCE=false runs the same with congestion signals only, which a client
# that ignores them does not heed.
# Usage: bench/two-tenants.sh [scale]   (scale 1: the flood shuffles 2 GB; 0.25 for a quick look)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scale=${1:-1}
if [ ! -d dist/jars ] || [ ! -f bench/target/classes/io/estuary/bench/ShuffleBenchmark.class ]; then
  build/make-dist.sh
fi
work=$(mktemp -d /tmp/estuary-tenants.XXXXXX)
trap 'build/local-cluster.sh stop "$work/cluster" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
# shellcheck source=build/lib/cluster.sh
. build/lib/cluster.sh
export DRIVER_MEMORY=${DRIVER_MEMORY:-4g}
class=io.estuary.bench.ShuffleBenchmark
# tenant NAME USER TENANT WORKLOAD OUT [JVM options]: one tenant's job in a fresh driver JVM.
tenant() {
  local name=$1 user=$2 tenant=$3 workload=$4 out=$5
  shift 5
  BENCH_ONLY=$workload SPARK_LOCAL_IP=127.0.0.1 build/spark-driver.sh "-Djava.io.tmpdir=$work" "${opts[@]}" \
    "-Dspark.estuary.client.user=$user" "-Dspark.estuary.client.tenant=$tenant" "$@" \
    "$class" run estuary 127.0.0.1:19097 "$scale" "$out" > "$out.log" 2>&1 || { cat "$out.log"; exit 1; }
  echo "  $name: $(cut -f1,2 "$out" | tr '\t' ' ') s"
}
flood() { tenant flood mallory flood terasort "$1" -Dspark.estuary.client.push.congestionMaxDelay=0ms; }
normal() { tenant normal carol etl small "$1"; }
echo "native sort shuffle (for the checksums)"
opts=()
BENCH_ONLY=terasort SPARK_LOCAL_IP=127.0.0.1 build/spark-driver.sh "-Djava.io.tmpdir=$work" "$class" run native - \
  "$scale" "$work/native-flood.tsv" > "$work/native-flood.log" 2>&1
BENCH_ONLY=small SPARK_LOCAL_IP=127.0.0.1 build/spark-driver.sh "-Djava.io.tmpdir=$work" "$class" run native - \
  "$scale" "$work/native-normal.tsv" > "$work/native-normal.log" 2>&1
export CLUSTER_AUTH=true CLUSTER_WORK=$work/cluster
export CLUSTER_WORKER_CONF="estuary.worker.congestion.appMaxRate ${BENCH_APP_RATE:-48m}
estuary.worker.congestion.enforce ${BENCH_ENFORCE:-true}"
build/local-cluster.sh start "$work/cluster" >/dev/null
opts=("$(cluster_spark_auth_opts)")
SPARK_LOCAL_IP=127.0.0.1 build/spark-driver.sh "${opts[@]}" io.estuary.bench.QuickstartJob 127.0.0.1:19097 0.5 \
  >/dev/null 2>&1
echo "alone"
flood "$work/flood-alone.tsv"
normal "$work/normal-alone.tsv"
echo "together"
flood "$work/flood-together.tsv" &
f=$!
normal "$work/normal-together.tsv" &
n=$!
wait "$f"
wait "$n"
for t in flood normal; do
  for run in alone together; do
    java -cp "bench/target/classes:$(cat bench/target/spark-classpath.txt)" "$class" compare \
      "$work/native-$t.tsv" "$work/$t-$run.tsv" > "$work/compare-$t-$run.txt" \
      || { cat "$work/compare-$t-$run.txt"; echo "checksum mismatch: $t $run" >&2; exit 1; }
  done
done
held=$(curl -s http://127.0.0.1:19101/metrics http://127.0.0.1:19111/metrics | awk '
  /^estuary_worker_push_held_seconds_total\{user="(mallory|carol)"/ { split($1, a, "\""); s[a[2]] += $2 }
  END { printf "mallory %.1f s, carol %.1f s", s["mallory"], s["carol"] }')
echo
echo "scale $scale, each application capped at ${BENCH_APP_RATE:-48m}/s per worker, enforce=${BENCH_ENFORCE:-true}"
printf '%-8s %10s %10s %8s\n' tenant alone together ratio
for t in flood normal; do
  a=$(cut -f2 "$work/$t-alone.tsv")
  b=$(cut -f2 "$work/$t-together.tsv")
  printf '%-8s %9.2fs %9.2fs %7.2fx\n' "$t" "$a" "$b" "$(echo "$b / $a" | bc -l)"
done
echo "connections held by the workers: $held"
echo "outputs equal native's (count and checksum) in every run"
