#!/usr/bin/env bash
# A master and two workers from dist/ on loopback, each with its own conf dir, logs and disk under $2.
# Usage: build/local-cluster.sh (start|stop) work-dir
# Ports: master 19097; worker 1: 19098-19101 (19101: HTTP); worker 2: 19108-19111.
set -euo pipefail
action=$1
work=$2
root=$(cd "$(dirname "$0")/.." && pwd)
sbin=$root/dist/sbin
export ESTUARY_HOME=$root/dist
export ESTUARY_LOG_DIR=$work/logs
MASTER=127.0.0.1:19097

conf_dir() { # name, extra lines
  local d=$work/conf-$1
  mkdir -p "$d"
  cp "$root/dist/conf/log4j2.xml.template" "$d/log4j2.xml"
  printf 'estuary.master.endpoints %s\n%s\n' "$MASTER" "$2" > "$d/estuary-defaults.conf"
  echo "$d"
}

worker_conf() { # instance, first port
  local p=$2
  conf_dir "worker$1" "estuary.worker.host 127.0.0.1
estuary.worker.rpc.port $p
estuary.worker.push.port $((p + 1))
estuary.worker.fetch.port $((p + 2))
estuary.worker.http.port $((p + 3))
estuary.worker.storage.dirs $work/disk-worker$1
estuary.worker.disk.reserve 0
estuary.worker.heartbeat.interval 2s"
}

case "$action" in
  start)
    mkdir -p "$work"
    ESTUARY_CONF_DIR=$(conf_dir master "estuary.master.host 127.0.0.1
estuary.master.port 19097") ESTUARY_INSTANCE=1 "$sbin/start-master.sh"
    ESTUARY_CONF_DIR=$(worker_conf 1 19098) ESTUARY_INSTANCE=1 "$sbin/start-worker.sh"
    ESTUARY_CONF_DIR=$(worker_conf 2 19108) ESTUARY_INSTANCE=2 "$sbin/start-worker.sh"
    # Wait (bounded) until both workers have registered.
    for _ in $(seq 1 60); do
      # (No log yet is not an error: under pipefail an empty grep would end this script.)
      n=$(cat "$ESTUARY_LOG_DIR"/estuary-worker-*.log 2>/dev/null | grep -c "Registered with the master" || true)
      [ "$n" -ge 2 ] && break
      sleep 0.5
    done
    [ "${n:-0}" -ge 2 ] || { echo "workers did not register; see $ESTUARY_LOG_DIR" >&2; exit 1; }
    echo "local cluster up: master $MASTER, 2 workers"
    ;;
  stop)
    ESTUARY_CONF_DIR=$work/conf-worker2 ESTUARY_INSTANCE=2 "$sbin/stop-worker.sh" || true
    ESTUARY_CONF_DIR=$work/conf-worker1 ESTUARY_INSTANCE=1 "$sbin/stop-worker.sh" || true
    ESTUARY_CONF_DIR=$work/conf-master ESTUARY_INSTANCE=1 "$sbin/stop-master.sh" || true
    ;;
esac
