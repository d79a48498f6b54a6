#!/usr/bin/env bash
# Rolling restart under load (not a test, not in CI).
#
# Usage: bench/rolling-restart.sh [rounds=2] [gigabytes=2] [workers=4]
#
# Starts a master and `workers` workers from dist/ on loopback (each its own JVM, conf, logs and disk under a temp
# dir). Spark jobs (io.estuary.bench.ChaosJob: a TeraSort-like job over `gigabytes` of generated records, replication
# on, Spark local[2,4]) run back to back while every worker in turn is stopped with sbin/stop-worker.sh (SIGTERM: a
# graceful stop), waited for, started again on the same ports and disk, and waited for until the master holds it
# ACTIVE again; `rounds` times over all workers. Every job's result is checked by count and an order-independent
# checksum against the generator's. Each restart shows the worker's "Graceful stop:" log line; a stop without one
# (killed, or its log ends before it), one that timed out and one that failed to commit a location count as not
# graceful. Prints each job and restart, then: jobs, failed, wrong, stage reruns, restarts, stops not graceful and
# how long stops and restarts took; saved to bench/results/rolling-restart-<timestamp>.txt. Exits 1 (and keeps the
# logs, printing their directory) when a job failed or was wrong, a worker did not come back, or a stop was not
# graceful.
#
# Environment: RR_DIST (the distribution to run, dist), RR_PORT_BASE (19600: master on it, its HTTP on +1, worker i
# on base+10i..+3), RR_PAUSE (seconds between restarts, 5), RR_JOB_TIMEOUT (seconds, 1200), RR_KEEP_LOGS (1 keeps
# the logs even when all went well), DRIVER_MEMORY.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

usage() { echo "usage: $0 [rounds=2] [gigabytes=2] [workers=4]" >&2; exit 2; }
rounds=${1:-2}
gb=${2:-2}
nworkers=${3:-4}
{ [[ "$rounds" =~ ^[0-9]+$ ]] && [[ "$gb" =~ ^[0-9]*\.?[0-9]+$ ]] && [[ "$nworkers" =~ ^[0-9]+$ ]] \
  && [ "$nworkers" -ge 2 ]; } || usage
port=${RR_PORT_BASE:-19600}
pause=${RR_PAUSE:-5}
job_timeout=${RR_JOB_TIMEOUT:-1200}
master_ep=127.0.0.1:$port
http_port=$((port + 1))
workers=$(seq 1 "$nworkers")
dist=${RR_DIST:-dist}

if ! { [ -d "$dist/jars" ] && ls "$dist"/spark/estuary-client-spark-3-shaded_2.12-*.jar >/dev/null 2>&1 && [ -f bench/target/classes/io/estuary/bench/ChaosJob.class ]; }; then
  [ "$dist" = dist ] || { echo "RR_DIST=$dist is not a built distribution (or bench/ is not compiled)" >&2; exit 1; }
  build/make-dist.sh
fi

work=$(mktemp -d /tmp/estuary-rolling.XXXXXX)
mkdir -p "$work/logs" "$work/drivers" "$work/tmp"
cp -r "$dist" "$work/dist"
cp -r bench/target/classes "$work/bench-classes"
export ESTUARY_HOME=$work/dist
export ESTUARY_LOG_DIR=$work/logs
export ESTUARY_STOP_TIMEOUT=60
stamp=$(date +%Y%m%d-%H%M%S)
report=$work/report.txt
jobs_pid=""
trouble=0

log() { echo "$*" | tee -a "$report"; }

cleanup() {
  local rc=$?
  set +e
  trap - EXIT INT TERM
  [ -n "$jobs_pid" ] && { pkill -9 -P "$jobs_pid"; kill -9 "$jobs_pid"; } 2>/dev/null
  for f in "$work"/logs/*.pid; do
    [ -f "$f" ] || continue
    p=$(cat "$f")
    ours "$p" && kill -9 "$p" 2>/dev/null
  done
  wait 2>/dev/null
  if [ "$rc" -ne 0 ] || [ "$trouble" -ne 0 ] || [ "${RR_KEEP_LOGS:-0}" = 1 ]; then
    echo "Logs kept in $work (servers: $work/logs, drivers: $work/drivers)"
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=build/lib/cluster.sh
. "$root/build/lib/cluster.sh"
CLUSTER_WORK=$work
CLUSTER_MASTER=$master_ep
CLUSTER_MASTER_HTTP=127.0.0.1:$http_port

wport() { echo $((port + 10 * $1)); }
wid() { cluster_worker_id "$(wport "$1")"; }
ours() { local c; c=$(tr '\0' ' ' 2>/dev/null < "/proc/$1/cmdline") || return 1; [[ "$c" == *"$work"* ]]; }
# The worker's state at the master (ACTIVE, SHUTTING_DOWN, ...), from bin/estuary --json workers.
wstate() { cluster_worker_state "$(wid "$1")"; }

start_worker() { # i; returns once the master holds it ACTIVE
  local i=$1
  cluster_start_worker "$i" "$(wport "$i")" 1s >/dev/null
  cluster_wait_worker_state "$(wid "$i")" ACTIVE 60 && return 0
  echo "worker$i is not ACTIVE at the master after 60 s (state '$(wstate "$i")')" >&2
  return 1
}

# shellcheck disable=SC2069 # stderr to stdout, stdout dropped
stop_worker() { cluster_stop_worker "$1" 2>&1 >/dev/null; } # prints only trouble
# The worker's "Graceful stop:" lines so far (its log is appended to across restarts).
graceful_lines() { cat "$work/logs/estuary-worker-$1.log"* 2>/dev/null | grep -c 'Graceful stop:' || true; }

# The drivers authenticate as the cluster expects (build/lib/cluster.sh).
spark_auth=$(cluster_spark_auth_opts)
spark_driver() {
  local opens
  opens=$(sed -n 's:.*<spark.jvm.opens>\(.*\)</spark.jvm.opens>.*:\1:p' pom.xml)
  # shellcheck disable=SC2086
  SPARK_LOCAL_IP=127.0.0.1 java -Xmx"${DRIVER_MEMORY:-6g}" $opens -Djava.io.tmpdir="$work/tmp" "$spark_auth" \
    -cp "$work/bench-classes:$(cat bench/target/spark-classpath.txt):$(ls "$ESTUARY_HOME"/spark/estuary-client-spark-3-shaded_2.12-*.jar)" "$@"
}

# Runs jobs one after another until $work/stop exists; one line per job in $work/jobs.txt.
job_loop() {
  local n=0 out line
  while [ ! -f "$work/stop" ]; do
    n=$((n + 1))
    out=$work/drivers/job-$n.log
    # shellcheck disable=SC2086
    timeout "$job_timeout" bash -c "$(declare -f spark_driver); work='$work'; ESTUARY_HOME='$ESTUARY_HOME'; spark_auth='$spark_auth'; \
      spark_driver io.estuary.bench.ChaosJob '$master_ep' '$gb' true $expected" >"$out" 2>&1 || true
    line=$(grep '^RESULT' "$out" | tail -1 || true)
    [ -n "$line" ] || line="RESULT failed (driver died or hung: $(grep -m1 -E 'Exception|Error' "$out" || tail -1 "$out"))"
    echo "job $n: $line" | tee -a "$work/jobs.txt"
  done
}

log "Estuary rolling restart: $rounds rounds over $nworkers workers, ${gb} GB jobs with replication, $(date)"
SPARK_LOCAL_IP=127.0.0.1 build/spark-driver.sh -Djava.io.tmpdir="$work/tmp" io.estuary.bench.ChaosJob expect "$gb" \
  >"$work/drivers/expected.log" 2>&1 || { cat "$work/drivers/expected.log"; exit 1; }
expected=$(sed -n 's/^EXPECTED //p' "$work/drivers/expected.log")
[ -n "$expected" ] || { cat "$work/drivers/expected.log"; exit 1; }
log "expected (count checksum): $expected"

cluster_start_master "$port" "$http_port" >/dev/null
cluster_wait_master 30 || { echo "the master did not come up; see $work/logs" >&2; exit 1; }
for i in $workers; do start_worker "$i"; done
log "cluster up: master $master_ep, $nworkers workers"

touch "$work/jobs.txt"
job_loop &
jobs_pid=$!
sleep "$pause"
restarts=0
not_graceful=0
stop_times=""
back_times=""
for r in $(seq 1 "$rounds"); do
  for i in $workers; do
    seen=$(graceful_lines "$i")
    t0=$(date +%s.%N)
    stop_out=$(stop_worker "$i" || true)
    t1=$(date +%s.%N)
    # The line this stop logged, if any: the log holds one per earlier stop too.
    if [ "$(graceful_lines "$i")" -gt "$seen" ]; then
      stop_line=$(cat "$work/logs/estuary-worker-$i.log"* | grep 'Graceful stop:' | tail -1 | sed 's/.*Graceful stop: //')
    else
      stop_line=""
    fi
    start_worker "$i" || trouble=1
    t2=$(date +%s.%N)
    restarts=$((restarts + 1))
    s=$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }")
    b=$(awk "BEGIN { printf \"%.1f\", $t2 - $t0 }")
    stop_times="$stop_times $s"
    back_times="$back_times $b"
    failed_commits=$(echo "$stop_line" | sed -n 's/.* \([0-9][0-9]*\) failed.*/\1/p')
    if [ -z "$stop_line" ] || [ -n "$stop_out" ] || [[ "$stop_line" == *"timed out"* ]] \
        || [ "${failed_commits:-0}" -gt 0 ]; then
      not_graceful=$((not_graceful + 1))
      trouble=1
      log "  round $r: worker$i stopped in ${s}s, ACTIVE again after ${b}s; NOT GRACEFUL (${stop_line:-no \
'Graceful stop:' line in its log}${stop_out:+; $stop_out})"
    else
      log "  round $r: worker$i stopped in ${s}s, ACTIVE again after ${b}s ($stop_line)"
    fi
    sleep "$pause"
  done
done
touch "$work/stop"
wait "$jobs_pid" || true
jobs_pid=""

njobs=$(grep -c '^job' "$work/jobs.txt" || true)
nok=$(grep -c 'RESULT ok' "$work/jobs.txt" || true)
nwrong=$(grep -c 'RESULT wrong' "$work/jobs.txt" || true)
nfail=$((njobs - nok - nwrong))
reruns=$(sed -n 's/.* reruns=\([0-9]*\).*/\1/p' "$work/jobs.txt" | awk '{ s += $1 } END { print s + 0 }')
[ "$nfail" -eq 0 ] && [ "$nwrong" -eq 0 ] || trouble=1
mean() { echo "$1" | tr ' ' '\n' | grep . | awk '{ s += $1; n++ } END { if (n) printf "%.1f", s / n; else printf "-" }'; }
cat "$work/jobs.txt" >> "$report"
log ""
log "jobs $njobs, failed $nfail, wrong $nwrong, stage reruns $reruns; restarts $restarts, not graceful $not_graceful, mean stop $(mean "$stop_times") s, mean back $(mean "$back_times") s"
if [ "$nfail" -eq 0 ] && [ "$nwrong" -eq 0 ]; then log "output check: every job correct"; else log "output check: FAILED"; fi
mkdir -p bench/results
cp "$report" "bench/results/rolling-restart-$stamp.txt"
echo "saved to bench/results/rolling-restart-$stamp.txt"
[ "$trouble" -eq 0 ] || exit 1
