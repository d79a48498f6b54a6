#!/usr/bin/env bash
# Starts or stops one Estuary server in the background: estuary-daemon.sh (start|stop) (master|worker)
# "run" starts it in the foreground instead (containers, systemd): the script becomes the JVM (exec), so the
# supervisor's SIGTERM reaches the server directly; no pid file, and stdout/stderr stay the caller's.
#
# Reads $ESTUARY_CONF_DIR (default: <dist>/conf): estuary-env.sh, estuary-defaults.conf, log4j2.xml.
# ESTUARY_INSTANCE (default 1) tells apart several servers of one role on one machine (pid and log names).
set -euo pipefail

usage() { echo "usage: $0 (start|stop|run) (master|worker)" >&2; exit 2; }
[ $# -eq 2 ] || usage
action=$1
role=$2
case "$role" in
  master) main=io.estuary.master.Master ;;
  worker) main=io.estuary.worker.Worker ;;
  *) usage ;;
esac

ESTUARY_HOME=${ESTUARY_HOME:-$(cd "$(dirname "$0")/.." && pwd)}
export ESTUARY_CONF_DIR=${ESTUARY_CONF_DIR:-$ESTUARY_HOME/conf}
# shellcheck source=/dev/null # the operator's own settings, if any
[ -f "$ESTUARY_CONF_DIR/estuary-env.sh" ] && . "$ESTUARY_CONF_DIR/estuary-env.sh"
ESTUARY_LOG_DIR=${ESTUARY_LOG_DIR:-$ESTUARY_HOME/logs}
ESTUARY_PID_DIR=${ESTUARY_PID_DIR:-$ESTUARY_LOG_DIR}
ESTUARY_INSTANCE=${ESTUARY_INSTANCE:-1}
name="estuary-$role-$ESTUARY_INSTANCE"
pidfile="$ESTUARY_PID_DIR/$name.pid"
logfile="$ESTUARY_LOG_DIR/$name.log"
mkdir -p "$ESTUARY_LOG_DIR" "$ESTUARY_PID_DIR"

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

# The server's command line, in the array "cmd".
java_command() {
  local JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java mem
  if [ "$role" = master ]; then mem=${ESTUARY_MASTER_MEMORY:-1g}; else mem=${ESTUARY_WORKER_MEMORY:-1g}; fi
  # Log4j's own shutdown hook would stop logging while the server's hook still runs (a worker's graceful stop
  # takes seconds), so the stop would leave no trace in the log; logging stays up until the JVM exits instead.
  # Out of heap (or threads, or metaspace) a server exits at once for its supervisor to restart, rather than live
  # on with dead threads; a refused direct-memory allocation is not such an error (the server refuses one push).
  cmd=("$JAVA" -Xmx"$mem" -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError -Dlog.estuary.file="$logfile"
    -Dlog4j2.shutdownHookEnabled=false)
  if [ "$role" = worker ]; then cmd+=(-XX:MaxDirectMemorySize="${ESTUARY_WORKER_OFFHEAP_MEMORY:-2g}"); fi
  if [ -f "$ESTUARY_CONF_DIR/log4j2.xml" ]; then cmd+=(-Dlog4j2.configurationFile="$ESTUARY_CONF_DIR/log4j2.xml"); fi
  # shellcheck disable=SC2206
  cmd+=(${ESTUARY_JAVA_OPTS:-} -cp "$ESTUARY_HOME/jars/*" "$main")
}

case "$action" in
  run)
    java_command
    exec "${cmd[@]}"
    ;;
  start)
    if running; then
      echo "$name is already running (pid $(cat "$pidfile"))"
      exit 0
    fi
    java_command
    nohup "${cmd[@]}" >>"$ESTUARY_LOG_DIR/$name.out" 2>&1 </dev/null &
    echo $! >"$pidfile"
    sleep 1
    if ! running; then
      echo "$name failed to start; see $ESTUARY_LOG_DIR/$name.out and $logfile" >&2
      tail -n 20 "$ESTUARY_LOG_DIR/$name.out" >&2 || true
      rm -f "$pidfile"
      exit 1
    fi
    echo "started $name (pid $(cat "$pidfile")), log: $logfile"
    ;;
  stop)
    if ! running; then
      echo "$name is not running"
      rm -f "$pidfile"
      exit 0
    fi
    pid=$(cat "$pidfile")
    # SIGTERM: a worker stops gracefully (moves writers elsewhere, commits and records its files) within
    # estuary.worker.shutdown.timeout (20 s by default); keep ESTUARY_STOP_TIMEOUT above it.
    wait_s=${ESTUARY_STOP_TIMEOUT:-30}
    kill "$pid"
    for _ in $(seq 1 $((wait_s * 2))); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "$name did not stop in $wait_s s; killing it" >&2
      kill -9 "$pid" || true
    fi
    rm -f "$pidfile"
    echo "stopped $name"
    ;;
  *) usage ;;
esac
