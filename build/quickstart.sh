#!/usr/bin/env bash
# The main job: builds Estuary if needed, starts a master and two workers on loopback, shuffles about 1 GB
# through them with Spark, checks every record, prints the throughput, and stops the servers. Authentication is on
# (build/local-cluster.sh makes the servers' cluster secret; the driver makes its application's own).
# Usage: build/quickstart.sh [gigabytes]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
{ [ -d dist/jars ] && [ -d dist/spark ] && [ -f bench/target/classes/io/estuary/bench/QuickstartJob.class ]; } \
  || build/make-dist.sh
work=$(mktemp -d /tmp/estuary-quickstart.XXXXXX)
trap 'build/local-cluster.sh stop "$work"; rm -rf "$work"' EXIT
build/local-cluster.sh start "$work"
# shellcheck source=build/lib/cluster.sh
. build/lib/cluster.sh
SPARK_LOCAL_IP=127.0.0.1 build/spark-driver.sh "$(cluster_spark_auth_opts)" io.estuary.bench.QuickstartJob \
  127.0.0.1:19097 "${1:-1}"
