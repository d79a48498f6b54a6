#!/usr/bin/env bash
# Where the time goes, per process, for one workload of bench/run.sh: async-profiler's CPU samples of the Spark driver
# JVM, where local mode runs every map and reduce task, and of each Estuary worker, over the same window (after the
# warm-up, to the end of the workload); then, per process, the CPU seconds, the CPU seconds per GB shuffled (the bytes
# Spark's tasks report written) and, for a worker, per GB it received (its copies and its replicas), its peak resident
# memory, the CPU seconds per thread group counted by the kernel, user and system apart (bench/thread-cpu.py), and the
# top frames, with the kernel's share (bench/stack-top.py).
# Usage: bench/profile.sh WORKLOAD [scale] [mode]
#   WORKLOAD  a part of a workload's name in bench/run.sh's table: terasort, small, wide
#   scale     as bench/run.sh (1: the TeraSort-like sort on 2 GB)
#   mode      replicated (Estuary's default), 1-copy, or native (Spark's sort shuffle: the driver alone)
# The collapsed stacks stay in the printed directory (*.collapsed: flame graph input).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
workload=${1:?usage: bench/profile.sh WORKLOAD [scale] [replicated|1-copy|native]}
scale=${2:-1}
mode=${3:-replicated}
case $mode in replicated | 1-copy | native) ;; *) echo "mode: replicated, 1-copy or native, not $mode" >&2; exit 2 ;; esac
if [ ! -d dist/jars ] || [ ! -f bench/target/classes/io/estuary/bench/ProfileWindow.class ]; then build/make-dist.sh; fi
out=$(mktemp -d /tmp/estuary-profile.XXXXXX)
cluster=$out/cluster
workers=()
driver=""
# (Each part may fail, e.g. the driver has ended: the next must run all the same.)
trap '{ [ -n "$driver" ] && kill "$driver"; } 2>/dev/null || true
  [ "$mode" = native ] || build/local-cluster.sh stop "$cluster" >/dev/null 2>&1 || true' EXIT
# shellcheck source=build/lib/cluster.sh
. build/lib/cluster.sh
opts=("-Djava.io.tmpdir=$out" "-Dbench.profile.dir=$out")
endpoint=-
if [ "$mode" != native ]; then
  export CLUSTER_WORK=$cluster
  build/local-cluster.sh start "$cluster" >/dev/null
  opts+=("$(cluster_spark_auth_opts)")
  [ "$mode" = 1-copy ] && opts+=(-Dspark.estuary.client.push.replicate=false)
  # Warm the workers' JIT first, as a long-running cluster is (bench/run.sh does the same).
  SPARK_LOCAL_IP=127.0.0.1 build/spark-driver.sh "${opts[@]}" io.estuary.bench.QuickstartJob 127.0.0.1:19097 0.5 \
    >/dev/null 2>&1
  endpoint=127.0.0.1:19097
  workers=("$(cat "$cluster/logs/estuary-worker-1.pid")" "$(cat "$cluster/logs/estuary-worker-2.pid")")
fi
metrics_ports=(19101 19111)
# async-profiler (from Maven Central), attached to each JVM for the window: Java, native and, where perf events are
# allowed, kernel frames. PROFILE_EVENT=itimer where they are not (no kernel frames then). PROFILE_EVENT=wall (with
# PROFILE_INTERVAL=1ms) samples every thread, running or not, and adds where each waited on Estuary
# (bench/wait-top.py): the fixed costs of a shuffle (registration, acknowledgements, commit, fetch round trips).
event=${PROFILE_EVENT:-cpu}
interval=${PROFILE_INTERVAL:-5ms}
ap_version=4.2
lib=$HOME/.cache/estuary/async-profiler-$ap_version/libasyncProfiler.so
if [ ! -f "$lib" ]; then
  mkdir -p "$(dirname "$lib")"
  mvn -B -q dependency:copy -Dartifact="tools.profiler:async-profiler:$ap_version" -DoutputDirectory="$out/ap" >/dev/null
  if ! unzip -p "$out/ap/async-profiler-$ap_version.jar" \
      "linux-$(uname -m | sed 's/x86_64/x64/; s/aarch64/arm64/')/libasyncProfiler.so" >"$lib.tmp"; then
    rm -f "$lib.tmp"
    echo "async-profiler $ap_version has no library for $(uname -sm)" >&2
    exit 1
  fi
  mv "$lib.tmp" "$lib"
fi
ticks=$(getconf CLK_TCK)
cpu_seconds() { awk -v t="$ticks" '{ printf "%.3f", ($14 + $15) / t }' "/proc/$1/stat"; }
push_bytes() {
  curl -sf "http://127.0.0.1:$1/metrics" | awk '/^estuary_worker_push_bytes_total/ { printf "%.0f", $2 }'
}

echo "profiling '$workload' (scale $scale, $mode); profiles in $out"
SPARK_LOCAL_IP=127.0.0.1 BENCH_ONLY=$workload build/spark-driver.sh "${opts[@]}" io.estuary.bench.ShuffleBenchmark \
  run "$([ "$mode" = native ] && echo native || echo estuary)" "$endpoint" "$scale" "$out/result.tsv" \
  >"$out/driver.log" 2>&1 &
driver=$!
await_file() { # file: waits while the driver lives
  until [ -f "$out/$1" ]; do
    kill -0 "$driver" 2>/dev/null || { echo "the driver ended before '$1':" >&2; tail -n 30 "$out/driver.log" >&2; exit 1; }
    sleep 0.2
  done
}
await_file warm
names=(driver) pids=("$driver")
for i in "${!workers[@]}"; do names+=("worker-$((i + 1))") pids+=("${workers[$i]}"); done
# pid, async-profiler command (quoted for jcmd, which would parse its "key=value" parts as its own options)
profiler() {
  local answer
  answer=$(jcmd "$1" JVMTI.agent_load "$lib" "\"$2\"" 2>&1)
  [[ "$answer" == *"return code: 0"* ]] || { echo "async-profiler '$2' in $1: $answer" >&2; return 1; }
}
declare -A cpu0 bytes0
for i in "${!pids[@]}"; do
  profiler "${pids[$i]}" "start,event=$event,interval=$interval,threads"
  python3 bench/thread-cpu.py snapshot "${pids[$i]}" >"$out/${names[$i]}.threads0"
done
for i in "${!workers[@]}"; do
  cpu0[$i]=$(cpu_seconds "${workers[$i]}")
  bytes0[$i]=$(push_bytes "${metrics_ports[$i]}")
done
touch "$out/recording"
await_file "done"
for i in "${!pids[@]}"; do
  python3 bench/thread-cpu.py snapshot "${pids[$i]}" >"$out/${names[$i]}.threads1"
  profiler "${pids[$i]}" "stop,file=$out/${names[$i]}.collapsed,collapsed"
done
declare -A cpu recv rss
for i in "${!workers[@]}"; do
  p=${workers[$i]}
  cpu[$i]=$(awk -v a="$(cpu_seconds "$p")" -v b="${cpu0[$i]}" 'BEGIN { printf "%.3f", a - b }')
  recv[$i]=$(( $(push_bytes "${metrics_ports[$i]}") - bytes0[$i] ))
  rss[$i]=$(awk '/^VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$p/status")
done
touch "$out/dumped"
wait "$driver" || { echo "the driver failed:" >&2; tail -n 30 "$out/driver.log" >&2; exit 1; }
grep -E "^\s+(native|estuary|1-copy) " "$out/driver.log" || true
shuffle_bytes=$(awk '/^shuffle_bytes/ { print $2 }' "$out/driver.txt")
gb() { awk -v b="$1" 'BEGIN { printf "%.3f", b / 1073741824 }'; }
per_gb() { awk -v c="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", c / (b / 1073741824); else printf "-" }'; }
echo
echo "shuffled: $(gb "$shuffle_bytes") GB (bytes Spark's tasks report written)"
printf '%-10s %10s %12s %14s %16s %14s\n' process "CPU s" "CPU s/GB" "received GB" "CPU s/GB recv" "peak RSS MB"
driver_cpu=$(awk '/^cpu_seconds/ { print $2 }' "$out/driver.txt")
printf '%-10s %10s %12s %14s %16s %14s\n' driver "$driver_cpu" "$(per_gb "$driver_cpu" "$shuffle_bytes")" - - -
for i in "${!workers[@]}"; do
  printf '%-10s %10s %12s %14s %16s %14s\n' "worker-$((i + 1))" "${cpu[$i]}" "$(per_gb "${cpu[$i]}" "$shuffle_bytes")" \
    "$(gb "${recv[$i]}")" "$(per_gb "${cpu[$i]}" "${recv[$i]}")" "${rss[$i]}"
done
echo
for name in "${names[@]}"; do
  python3 bench/thread-cpu.py diff "$name" "$out/$name.threads0" "$out/$name.threads1"
  python3 bench/stack-top.py "$name ($event samples)" "$out/$name.collapsed"
  # Wall-clock samples also say where threads waited on Estuary (a registration, an acknowledgement, a commit).
  if [ "$event" = wall ]; then python3 bench/wait-top.py "$name" "$out/$name.collapsed" "${interval%ms}"; fi
  echo
done
