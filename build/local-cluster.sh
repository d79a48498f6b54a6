#!/usr/bin/env bash
# A master and two workers from dist/ on loopback, each with its own conf dir, logs and disk under $2.
# Usage: build/local-cluster.sh (start|stop) work-dir
# Ports: master 19097 (HTTP 9095, the default); worker 1: 19098-19101 (19101: HTTP); worker 2: 19108-19111.
# Authentication is on: the servers share the cluster secret made in work-dir/cluster.secret (mode 600), and a Spark
# driver needs -Dspark.estuary.auth.enabled=true (build/lib/cluster.sh: cluster_spark_auth_opts). CLUSTER_AUTH=false
# in the environment starts them without it.
set -euo pipefail
action=$1
work=$2
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=build/lib/cluster.sh
. "$root/build/lib/cluster.sh"
export ESTUARY_HOME=$root/dist
export ESTUARY_LOG_DIR=$work/logs
CLUSTER_WORK=$work
CLUSTER_MASTER=127.0.0.1:19097
CLUSTER_MASTER_HTTP=127.0.0.1:9095

case "$action" in
  start)
    mkdir -p "$work"
    cluster_start_master 19097 9095
    cluster_start_worker 1 19098
    cluster_start_worker 2 19108
    # Wait (bounded) until the master holds both workers ACTIVE.
    cluster_wait_active 2 30 || { echo "workers did not register; see $ESTUARY_LOG_DIR" >&2; exit 1; }
    echo "local cluster up: master $CLUSTER_MASTER, 2 workers"
    ;;
  stop)
    cluster_stop_worker 2 || true
    cluster_stop_worker 1 || true
    cluster_stop_master || true
    ;;
esac
