#!/usr/bin/env bash
# The stage-end commit's latency with and without estuary.worker.commit.fromMemory, on one build: the 200 small
# shuffles of bench/run.sh, replicated, on a fresh local cluster per setting (dist/), alternating, with the driver's
# own record of each commit ("committed (N locations) in M ms"); prints per run the workload's time, where Spark
# spent it, and the commits' sum, median, p90 and max over the 200 shuffles.
# Usage: bench/commit-times.sh [rounds] [shared|disaggregated]   (disaggregated: servers on core 0, Spark on core 1)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=build/lib/cluster.sh
source build/lib/cluster.sh
rounds=${1:-2}
placement=${2:-shared}
server=() spark=()
if [ "$placement" = disaggregated ]; then server=(taskset -c 0) spark=(taskset -c 1); fi
work=$(mktemp -d)
trap 'build/local-cluster.sh stop "$work/cluster" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
export CLUSTER_WORK=$work/cluster CLUSTER_AUTH=true CLUSTER_TLS=false
for round in $(seq 1 "$rounds"); do
  for setting in true false; do
    export CLUSTER_WORKER_CONF="estuary.worker.commit.fromMemory $setting"
    "${server[@]}" build/local-cluster.sh start "$CLUSTER_WORK" >/dev/null
    opts=(-Djava.io.tmpdir="$work" "$(cluster_spark_auth_opts)")
    SPARK_LOCAL_IP=127.0.0.1 "${spark[@]}" build/spark-driver.sh "${opts[@]}" io.estuary.bench.QuickstartJob \
      127.0.0.1:19097 0.5 >/dev/null 2>&1
    log=$work/run-$setting-$round.log
    BENCH_ONLY=small SPARK_LOCAL_IP=127.0.0.1 "${spark[@]}" build/spark-driver.sh "${opts[@]}" \
      -Dlog4j2.configurationFile=bench/log4j2-commit-times.properties io.estuary.bench.ShuffleBenchmark run estuary \
      127.0.0.1:19097 1 "$work/out.tsv" >"$log" 2>&1
    build/local-cluster.sh stop "$CLUSTER_WORK" >/dev/null
    echo "commit.fromMemory=$setting, round $round ($placement):"
    grep -A1 -E '^ +estuary' "$log" | sed 's/^ */  /'
    grep 'committed (' "$log" | tail -n 200 | sed 's/.* in \([0-9]*\) ms/\1/' | sort -n \
      | awk '{a[NR]=$1; s+=$1} END {printf "  commits: %d ms in all, median %d ms, p90 %d ms, max %d ms\n", s, a[int(NR/2)], a[int(NR*0.9)], a[NR]}'
  done
done
