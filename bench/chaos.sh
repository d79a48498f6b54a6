#!/usr/bin/env bash
# Chaos run for "survive the loss of any worker" (not a test, not in CI).
#
# Usage: bench/chaos.sh [runs=20] [gigabytes=2] [replicate=both|on|off]
#
# Starts a master and 3 workers from dist/ on loopback (each its own JVM, own conf, logs and disk under a temp
# dir), then for each replication mode (both = on, then off) runs a TeraSort-like job of `gigabytes` of generated
# 100-byte records (io.estuary.bench.ChaosJob: Spark local[2,4], so 4 attempts per task) a few times without
# chaos for the baseline time, then `runs` times while kill -9'ing a random worker at a random moment of the job
# (0 to the baseline job time after the job starts); one time in three the killed worker is restarted on the same
# ports, with its disks, a few seconds later. Before every run all 3 workers are up and registered with the master
# (each worker's /api/status, and the master's view through bin/estuary --json; build/lib/cluster.sh). Every
# result is checked by count and an order-independent checksum against the generator's. Prints per run and a
# table per mode (runs, failed, wrong, stage reruns, mean time with kills against the baseline), saved to
# bench/results/chaos-<timestamp>.txt. Logs are kept (and their directory printed) when anything failed. Servers
# and drivers run from a copy of dist/ and of the bench classes taken at the start, so that a rebuild during a long
# run does not change what is measured.
#
# Environment: CHAOS_BASELINE_RUNS (3), CHAOS_SEED (random; the same seed replays the same kill schedule),
# CHAOS_PORT_BASE (19400: master 19400, its HTTP 19401, worker i on base+10i..base+10i+2), CHAOS_JOB_TIMEOUT
# (seconds a run may take before it counts as hung/failed; default max(600, 10 x baseline)), DRIVER_MEMORY.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

usage() { echo "usage: $0 [runs=20] [gigabytes=2] [replicate=both|on|off]" >&2; exit 2; }
runs=${1:-20}
gb=${2:-2}
mode=${3:-both}
case "$mode" in
  both) modes="true false" ;;
  on) modes="true" ;;
  off) modes="false" ;;
  *) usage ;;
esac
{ [[ "$runs" =~ ^[0-9]+$ ]] && [[ "$gb" =~ ^[0-9]*\.?[0-9]+$ ]]; } || usage
baseline_runs=${CHAOS_BASELINE_RUNS:-3}
seed=${CHAOS_SEED:-$((RANDOM * 32768 + RANDOM))}
RANDOM=$seed
port=${CHAOS_PORT_BASE:-19400}
master_ep=127.0.0.1:$port
http_port=$((port + 1))
workers="1 2 3"

{ [ -d dist/jars ] && ls dist/spark/estuary-client-spark-3-shaded_2.12-*.jar >/dev/null 2>&1 && [ -f bench/target/classes/io/estuary/bench/ChaosJob.class ]; } \
  || build/make-dist.sh

work=$(mktemp -d /tmp/estuary-chaos.XXXXXX)
mkdir -p "$work/logs" "$work/drivers" "$work/tmp"
# A snapshot of dist/ and of the bench classes: the servers restarted in the middle of a run and every driver use
# the same build as the first (a build in the tree meanwhile changes nothing here).
cp -r dist "$work/dist"
cp -r bench/target/classes "$work/bench-classes"
export ESTUARY_HOME=$work/dist
export ESTUARY_LOG_DIR=$work/logs
stamp=$(date +%Y%m%d-%H%M%S)
report=$work/report.txt
driver=""
killer=""
trouble=0

log() { echo "$*" | tee -a "$report"; }

cleanup() {
  local rc=$?
  set +e
  trap - EXIT INT TERM
  if [ -n "$killer" ]; then pkill -9 -P "$killer" 2>/dev/null; kill -9 "$killer" 2>/dev/null; fi
  [ -n "$driver" ] && { kill -9 "$driver"; wait "$driver"; } 2>/dev/null
  local pids=""
  for f in "$work"/logs/*.pid; do
    [ -f "$f" ] || continue
    p=$(cat "$f")
    ours "$p" && kill "$p" 2>/dev/null && pids="$pids $p"
  done
  for _ in $(seq 1 20); do # up to 10 s for a clean stop, then kill
    left=""
    for p in $pids; do alive "$p" && left="$left $p"; done
    [ -z "$left" ] && break
    sleep 0.5
  done
  for p in $pids; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  if [ "$rc" -ne 0 ] || [ "$trouble" -ne 0 ]; then
    echo "Logs kept in $work (servers: $work/logs, drivers: $work/drivers)"
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the cluster -------------------------------------------------------------------------------------------------

# shellcheck source=build/lib/cluster.sh
. "$root/build/lib/cluster.sh"
CLUSTER_WORK=$work
CLUSTER_MASTER=$master_ep
CLUSTER_MASTER_HTTP=127.0.0.1:$http_port

wport() { echo $((port + 10 * $1)); }
wid() { cluster_worker_id "$(wport "$1")"; }
wpid() { cat "$work/logs/estuary-worker-$1.pid" 2>/dev/null || true; }
ours() { local c; c=$(tr '\0' ' ' 2>/dev/null < "/proc/$1/cmdline") || return 1; [[ "$c" == *"$work"* ]]; } # not a reused pid
alive() { local s; s=$(ps -o stat= -p "$1" 2>/dev/null || true); [ -n "$s" ] && [ "${s:0:1}" != Z ]; } # not dying
wrunning() { local p; p=$(wpid "$1"); [ -n "$p" ] && alive "$p"; }
wstate() { cluster_worker_state "$(wid "$1")"; }

# Starts worker $1 (same ports and disk every time) and waits until it has registered with the master.
start_worker() {
  local i=$1
  # A killed worker's ports are free at once (no TIME_WAIT on listening sockets), so it can come back right away.
  # Its pid file goes first: until it is reaped, a killed JVM is a zombie that start-worker.sh takes for running.
  wrunning "$i" || rm -f "$work/logs/estuary-worker-$i.pid"
  cluster_start_worker "$i" "$(wport "$i")" >/dev/null
  # Registered: the worker says ACTIVE of itself only once the master accepted this run's registration.
  for _ in $(seq 1 120); do
    [ "$(cluster_worker_own_state "$(wport "$i")")" = ACTIVE ] && return 0
    wrunning "$i" || break
    sleep 0.5
  done
  echo "worker$i did not register; see $work/logs/estuary-worker-$i.out and .log" >&2
  return 1
}

# Every worker running, registered and ACTIVE in the master's status (a worker that failure reports got excluded
# is activated again through the admin API: every run starts with 3 workers that take slots).
ensure_workers() {
  local i s
  for i in $workers; do
    wrunning "$i" || start_worker "$i"
  done
  for i in $workers; do
    for _ in $(seq 1 60); do
      s=$(wstate "$i")
      [ "$s" = ACTIVE ] && break
      if [ -n "$s" ]; then
        log "    worker$i is $s at the master: activating it again"
        cluster_cli activate "$(wid "$i")" >/dev/null 2>&1 || true
      fi
      sleep 0.5
    done
    [ "$s" = ACTIVE ] || { echo "worker$i is not active at the master (state '${s:-absent}')" >&2; exit 1; }
  done
}

start_cluster() {
  cluster_start_master "$port" "$http_port" >/dev/null
  cluster_wait_master 30 || true # ensure_workers below says what is missing
  for i in $workers; do start_worker "$i"; done
  ensure_workers
  echo "cluster up: master $master_ep (http $http_port), workers $(for i in $workers; do printf '%s ' "$(wid "$i")"; done)"
}

# --- one run ------------------------------------------------------------------------------------------------------

# Waits for the driver's JOB_START, sleeps, kill -9s a worker and maybe restarts it. Prints what it did.
monkey() { # driver-log, driver-pid, delay-seconds, worker, restart-after (0: none)
  local out=$1 dpid=$2 delay=$3 i=$4 restart=$5 late=""
  for _ in $(seq 1 1200); do
    grep -q '^JOB_START' "$out" 2>/dev/null && break
    kill -0 "$dpid" 2>/dev/null || { echo "NOKILL driver ended before the job started"; return 0; }
    sleep 0.1
  done
  sleep "$delay"
  grep -q '^RESULT' "$out" 2>/dev/null && late=" LATE"
  local p
  p=$(wpid "$i")
  if ours "$p"; then kill -9 "$p" 2>/dev/null || true; fi
  echo "KILLED worker$i +${delay}s$late"
  for _ in $(seq 1 100); do alive "$p" || break; sleep 0.1; done # gone, so that nobody takes it for running
  if [ "$restart" != 0 ]; then
    sleep "$restart"
    start_worker "$i" && echo "RESTARTED worker$i after ${restart}s" || echo "RESTART_FAILED worker$i"
  fi
}

# A Spark driver JVM as build/spark-driver.sh starts it (Spark, then the shaded client jar), on the snapshot,
# authenticating as the cluster expects (build/lib/cluster.sh).
spark_driver() {
  local opens
  opens=$(sed -n 's:.*<spark.jvm.opens>\(.*\)</spark.jvm.opens>.*:\1:p' pom.xml)
  # shellcheck disable=SC2086
  SPARK_LOCAL_IP=127.0.0.1 exec java -Xmx"${DRIVER_MEMORY:-6g}" $opens -Djava.io.tmpdir="$work/tmp" \
    "$(cluster_spark_auth_opts)" \
    -cp "$work/bench-classes:$(cat bench/target/spark-classpath.txt):$(ls "$ESTUARY_HOME"/spark/estuary-client-spark-3-shaded_2.12-*.jar)" "$@"
}

# Runs ChaosJob once; with a kill schedule, the monkey alongside. Sets: verdict secs reruns tfail result_line.
run_job() { # name, replicate, timeout-seconds, [delay worker restart]
  local rep=$2 timeout=$3 out=$work/drivers/$1.log
  # shellcheck disable=SC2086
  (spark_driver io.estuary.bench.ChaosJob "$master_ep" "$gb" "$rep" $expected >"$out" 2>&1) &
  driver=$!
  if [ $# -gt 3 ]; then
    monkey "$out" "$driver" "$4" "$5" "$6" >"$out.monkey" 2>&1 &
    killer=$!
  fi
  local start=$SECONDS hung=0
  while kill -0 "$driver" 2>/dev/null; do
    if [ $((SECONDS - start)) -ge "$timeout" ]; then
      hung=1
      kill -9 "$driver" 2>/dev/null || true
      break
    fi
    sleep 0.5
  done
  wait "$driver" 2>/dev/null || true
  driver=""
  if [ -n "$killer" ]; then wait "$killer" 2>/dev/null || true; killer=""; fi
  result_line=$(grep '^RESULT' "$out" | tail -1 || true)
  if [ -z "$result_line" ]; then
    verdict=failed
    secs=0
    [ "$hung" = 1 ] && result_line="RESULT failed (hung: killed after ${timeout}s)" \
      || result_line="RESULT failed (driver died: $(grep -m1 -E 'Exception|Error' "$out" || tail -1 "$out"))"
  else
    verdict=$(echo "$result_line" | awk '{print $2}')
    secs=$(echo "$result_line" | sed -n 's/.* seconds=\([0-9.]*\).*/\1/p')
  fi
  reruns=$(sed -n 's/^STAGE_RERUNS \([0-9]*\)$/\1/p' "$out" | tail -1)
  reruns=${reruns:-0}
  tfail=$(echo "$result_line" | sed -n 's/.* taskFailures=\([0-9]*\).*/\1/p')
  tfail=${tfail:-0}
  [ "$verdict" = ok ] || trouble=1
}

fmean() { awk '{ s += $1; n++ } END { if (n) printf "%.2f", s / n; else printf "-" }'; }
calc() { awk "BEGIN { $1 }"; }

# --- main ---------------------------------------------------------------------------------------------------------

log "Estuary chaos: $runs runs x ${gb} GB per mode ($mode), baseline $baseline_runs runs, seed $seed, $(date)"
log "logs: $work (kept if anything fails)"
echo "Expected result from the generator"
# (through build/spark-driver.sh, which also writes Spark's class path file if it is missing)
SPARK_LOCAL_IP=127.0.0.1 build/spark-driver.sh -Djava.io.tmpdir="$work/tmp" io.estuary.bench.ChaosJob expect "$gb" \
  >"$work/drivers/expected.log" 2>&1 || { cat "$work/drivers/expected.log"; exit 1; }
expected=$(sed -n 's/^EXPECTED //p' "$work/drivers/expected.log")
[ -n "$expected" ] || { cat "$work/drivers/expected.log"; exit 1; }
log "expected (count checksum): $expected"
start_cluster
echo "Warming up the servers (one unmeasured run)"
run_job warmup true "${CHAOS_JOB_TIMEOUT:-$(calc 'printf "%d", 600 + 300 * '"$gb")}"
echo "  warm-up: $result_line"
trouble=0 # a failed warm-up is shown, not counted

table=$work/table.txt
printf '%-14s %5s %6s %6s %13s %9s %5s %9s %10s %9s %11s %9s\n' mode runs failed wrong "stage reruns" restarts late \
  "task-fail" "baseline s" "base-fail" "w/ kills s" overhead > "$table"
for rep in $modes; do
  label="replicate=$([ "$rep" = true ] && echo on || echo off)"
  log ""
  log "== $label: baseline, $baseline_runs runs without kills"
  btimes=""
  bfailed=0
  for b in $(seq 1 "$baseline_runs"); do
    ensure_workers
    run_job "$label-baseline-$b" "$rep" "${CHAOS_JOB_TIMEOUT:-$(calc 'printf "%d", 600 + 300 * '"$gb")}"
    log "  baseline $b: $verdict ${secs}s, $reruns stage reruns, $tfail task failures"
    if [ "$verdict" = ok ]; then btimes="$btimes $secs"; else bfailed=$((bfailed + 1)); log "    $result_line"; fi
  done
  base=$(echo "$btimes" | tr ' ' '\n' | grep . | fmean || true)
  [ -n "$base" ] && [ "$base" != - ] || base=-
  if [ "$base" = - ]; then
    log "  no baseline run succeeded; kill moments drawn over 30 s"
    span=30
  else
    span=$base
  fi
  timeout=${CHAOS_JOB_TIMEOUT:-$(calc "printf \"%d\", ($span * 10 > 600) ? $span * 10 : 600")}
  log "== $label: $runs runs, each killing a worker at a random moment of the first ${span}s of the job"
  nfail=0; nwrong=0; nreruns=0; nrerunruns=0; nrestarts=0; nlate=0; ntfail=0; ktimes=""
  for r in $(seq 1 "$runs"); do
    ensure_workers
    w=$(( RANDOM % 3 + 1 ))
    delay=$(calc "printf \"%.1f\", $span * $RANDOM / 32768")
    restart=0
    (( RANDOM % 3 == 0 )) && restart=$(( 2 + RANDOM % 4 ))
    run_job "$label-kill-$r" "$rep" "$timeout" "$delay" "$w" "$restart"
    events=$(tr '\n' ' ' < "$work/drivers/$label-kill-$r.log.monkey" | sed 's/ *$//')
    grep -q '^RESTARTED' "$work/drivers/$label-kill-$r.log.monkey" && nrestarts=$((nrestarts + 1))
    grep -q 'LATE' "$work/drivers/$label-kill-$r.log.monkey" && nlate=$((nlate + 1))
    grep -q 'RESTART_FAILED' "$work/drivers/$label-kill-$r.log.monkey" && trouble=1
    log "  run $r: [$events] $verdict ${secs}s, $reruns stage reruns, $tfail task failures"
    case "$verdict" in
      ok) ktimes="$ktimes $secs" ;;
      wrong) nwrong=$((nwrong + 1)); ktimes="$ktimes $secs"; log "    $result_line" ;;
      *) nfail=$((nfail + 1)); log "    $result_line" ;;
    esac
    nreruns=$((nreruns + reruns))
    [ "$reruns" -gt 0 ] && nrerunruns=$((nrerunruns + 1))
    ntfail=$((ntfail + tfail))
  done
  kmean=$(echo "$ktimes" | tr ' ' '\n' | grep . | fmean || true)
  [ -n "$kmean" ] || kmean=-
  if [ "$base" != - ] && [ "$kmean" != - ]; then ratio=$(calc "printf \"%.2fx\", $kmean / $base"); else ratio=-; fi
  printf '%-14s %5s %6s %6s %13s %9s %5s %9s %10s %9s %11s %9s\n' "$label" "$runs" "$nfail" "$nwrong" \
    "$nreruns in $nrerunruns" "$nrestarts" "$nlate" "$ntfail" "$base" "$bfailed/$baseline_runs" "$kmean" "$ratio" \
    >> "$table"
done

log ""
log "Summary ($runs runs x ${gb} GB per mode, seed $seed; stage reruns: total stage attempts > 0, in how many runs;"
log "late: kills that landed after the job had ended; times: mean of the runs that completed, from the job's start)"
tee -a "$report" < "$table"
mkdir -p bench/results
cp "$report" "bench/results/chaos-$stamp.txt"
echo "saved to bench/results/chaos-$stamp.txt"
if [ "$trouble" -ne 0 ]; then
  echo
  echo "Something failed. Server logs: $work/logs; driver logs: $work/drivers"
  for f in "$work"/logs/estuary-master-*.log "$work"/logs/estuary-worker-*.log; do
    [ -f "$f" ] || continue
    n=$(grep -c -E ' (WARN|ERROR) ' "$f" || true)
    echo "  $f: $n warnings/errors; the last ones:"
    grep -E ' (WARN|ERROR) ' "$f" | tail -5 | cut -c1-400 | sed 's/^/    /' || true
  done
fi
