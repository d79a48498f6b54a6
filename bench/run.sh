#!/usr/bin/env bash
# The benchmark: every workload on Spark's native sort shuffle, on Estuary with replicas (its default: authentication
# on, no TLS) and on Estuary with one copy (a local master and two workers), in one invocation; each in a fresh
# driver JVM. Then, unless BENCH_SECURITY=0, the same replicated runs on a cluster without authentication and on one
# with TLS on every port (and authentication): what security costs, side by side. Prints each time and the
# Estuary/native ratios, fails on a checksum mismatch.
# Usage: bench/run.sh [scale] [repeats]   (scale 1 = TeraSort-like on 2 GB; 0.1 for a quick look)
# With repeats > 1, native and Estuary runs alternate (the clusters in reverse order on even runs); the table gives
# the best time of each workload, then the median (this machine's run-to-run noise is larger than some of the
# differences measured).
# BENCH_ONLY=NAME runs only the workloads whose name holds NAME (terasort, small, sql, tiny, wide);
# BENCH_DRIVER_OPTS: JVM options for every Spark driver, native or not (e.g. -Dspark.io.compression.codec=zstd).
# BENCH_PLACEMENT: shared (default: servers and Spark on every core), disaggregated (the servers pinned to the first
# core and Spark, native or not, to the others, with taskset: shuffle nodes apart from compute, as a remote shuffle
# service is deployed), or both (each repeat runs both; a table per placement).
# BENCH_SUITE: shuffle (default: the workloads above) or tpcds (the 103 TPC-DS queries of Spark's own tests over
# tables of scale factor [scale], made once into bench/target/tpcds or TPCDS_DATA; BENCH_ONLY=q1,q14a picks queries;
# each query's rows and checksum must equal native's; prints the total and the queries over 1.3x).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scale=${1:-1}
repeats=${2:-1}
security=${BENCH_SECURITY:-1}
placement=${BENCH_PLACEMENT:-shared}
case ${BENCH_SUITE:=shuffle} in
  shuffle) class=io.estuary.bench.ShuffleBenchmark ;;
  tpcds) class=io.estuary.bench.TpcdsBenchmark ;;
  *) echo "BENCH_SUITE: shuffle or tpcds, not $BENCH_SUITE" >&2; exit 2 ;;
esac
case $placement in
  shared) placements=(shared) ;;
  disaggregated) placements=(disaggregated) ;;
  both) placements=(shared disaggregated) ;;
  *) echo "BENCH_PLACEMENT: shared, disaggregated or both, not $placement" >&2; exit 2 ;;
esac
cores=$(nproc)
[ "$placement" = shared ] || [ "$cores" -ge 2 ] || { echo "a disaggregated placement needs 2 cores or more" >&2; exit 2; }
if [ ! -d dist/jars ] || [ ! -f bench/target/classes/io/estuary/bench/ShuffleBenchmark.class ]; then
  build/make-dist.sh
fi
work=$(mktemp -d /tmp/estuary-bench.XXXXXX)
cluster=""
trap '[ -n "$cluster" ] && build/local-cluster.sh stop "$cluster"; rm -rf "$work"' EXIT
# shellcheck source=build/lib/cluster.sh
. build/lib/cluster.sh
opts=()
# pin: the taskset prefix of the current placement's servers (server) or Spark drivers (spark); none when shared.
where=shared
pin() {
  [ "$where" = shared ] && return 0
  if [ "$1" = server ]; then echo taskset -c 0; else echo taskset -c "1-$((cores - 1))"; fi
}
# up NAME AUTH TLS: a fresh local cluster (build/local-cluster.sh) with that security, warmed up; sets opts to what
# its Spark drivers need (build/lib/cluster.sh; SparkConf reads spark.* system properties).
up() {
  [ -n "$cluster" ] && build/local-cluster.sh stop "$cluster" >/dev/null
  cluster=$work/cluster-$1
  export CLUSTER_AUTH=$2 CLUSTER_TLS=$3 CLUSTER_WORK=$cluster
  # shellcheck disable=SC2046 # pin prints a command prefix, or nothing
  $(pin server) build/local-cluster.sh start "$cluster" >/dev/null
  opts=("-Djava.io.tmpdir=$work" "$(cluster_spark_auth_opts)")
  mapfile -t -O 2 opts < <(cluster_spark_tls_opts)
  # Estuary servers are long-running: warm them up (JIT) with a job of their own first, as a production cluster is.
  # Each measured driver is a fresh JVM, as executors are, with the same warm-up job before timing.
  # shellcheck disable=SC2046
  SPARK_LOCAL_IP=127.0.0.1 $(pin spark) build/spark-driver.sh "${opts[@]}" io.estuary.bench.QuickstartJob \
    127.0.0.1:19097 0.5 >/dev/null 2>&1
}
# driver ARGS: ShuffleBenchmark in a fresh Spark driver JVM (placed as the current placement says), with
# BENCH_DRIVER_OPTS (JVM options for every driver, native ones too: e.g. -Dspark.io.compression.codec=zstd).
driver() {
  # shellcheck disable=SC2046,SC2086
  SPARK_LOCAL_IP=127.0.0.1 $(pin spark) build/spark-driver.sh "${opts[@]}" ${BENCH_DRIVER_OPTS:-} \
    "$class" "$@"
}
# Estuary with one copy of each partition.
single() {
  local saved=("${opts[@]}")
  opts+=(-Dspark.estuary.client.push.replicate=false)
  driver "$@"
  opts=("${saved[@]}")
}
if [ "$BENCH_SUITE" = tpcds ]; then
  SPARK_LOCAL_IP=127.0.0.1 build/spark-driver.sh "-Djava.io.tmpdir=$work" "$class" generate "$scale"
fi
echo "Each workload ($BENCH_SUITE) on native sort shuffle, then on Estuary (127.0.0.1:19097), scale $scale, placement $placement"
# Result files per placement and configuration, comma-separated.
declare -A nat est one open tls
# measure CLUSTER RUN: the runs of one cluster configuration in the current placement, their result files added to
# the lists above.
measure() {
  local f=$work/$where-$1-$2
  case $1 in
    default)
      up default true false
      driver run native - "$scale" "$f-native.tsv"
      driver run estuary 127.0.0.1:19097 "$scale" "$f-estuary.tsv"
      single run estuary 127.0.0.1:19097 "$scale" "$f-single.tsv"
      nat[$where]=${nat[$where]:+${nat[$where]},}$f-native.tsv
      est[$where]=${est[$where]:+${est[$where]},}$f-estuary.tsv
      one[$where]=${one[$where]:+${one[$where]},}$f-single.tsv
      ;;
    open)
      echo "Estuary without authentication"
      up open false false
      driver run estuary 127.0.0.1:19097 "$scale" "$f.tsv"
      open[$where]=${open[$where]:+${open[$where]},}$f.tsv
      ;;
    tls)
      echo "Estuary with TLS on every port (and authentication)"
      up tls true true
      driver run estuary 127.0.0.1:19097 "$scale" "$f.tsv"
      tls[$where]=${tls[$where]:+${tls[$where]},}$f.tsv
      ;;
  esac
}
for i in $(seq 1 "$repeats"); do
  [ "$repeats" -gt 1 ] && echo "run $i of $repeats"
  # Even runs take the clusters (and placements) in the opposite order: the first cluster of a run (a cold page
  # cache, a JIT-cold machine) or the last (a full one) must not always be the same configuration.
  order=(default)
  [ "$security" = 1 ] && order=(default open tls)
  run_placements=("${placements[@]}")
  if [ $((i % 2)) = 0 ]; then
    [ "$security" = 1 ] && order=(tls open default)
    [ "${#placements[@]}" = 2 ] && run_placements=(disaggregated shared)
  fi
  for where in "${run_placements[@]}"; do
    [ "${#placements[@]}" = 2 ] && echo "placement: $where"
    for c in "${order[@]}"; do measure "$c" "$i"; done
  done
done
where=shared # the comparison itself is not timed
stamp=$(date +%Y%m%d-%H%M%S)
mkdir -p bench/results
for p in "${placements[@]}"; do
  table=$work/table-$p.txt
  echo
  echo "placement: $p$([ "$p" = disaggregated ] && echo " (servers on core 0, Spark on cores 1-$((cores - 1)))")"
  columns=("replicated=${est[$p]}" "1-copy=${one[$p]}")
  [ "$security" = 1 ] && columns+=("no-auth=${open[$p]}" "TLS=${tls[$p]}")
  driver compare "${nat[$p]}" "${columns[@]}" | tee "$table"
  if [ "$security" = 1 ]; then
    # Authentication's and TLS's own cost: the default (replicated, authenticated) against each, best runs.
    python3 - "$table" <<'PY'
import sys
rows = []
for l in open(sys.argv[1]):
    if l.startswith("median"): break
    if l.strip() and not l.startswith(("workload", "checksum")): rows.append(l.split())
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
  suffix=$([ "$p" = shared ] && echo "" || echo "-$p")
  [ "$BENCH_SUITE" = tpcds ] && suffix=-tpcds$suffix
  cp "$table" "bench/results/$stamp-scale$scale-x$repeats$suffix.txt"
done
