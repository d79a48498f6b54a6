#!/usr/bin/env bash
# CI check: a real spark-submit (the PySpark 3.5 distribution from PyPI, in a venv) with separate executor JVMs
# (--master local-cluster[2,1,512]: two executors of 512 MB) against a master and a worker started from this build:
#   1. the jar given as README says (spark.driver.extraClassPath / spark.executor.extraClassPath): the jobs succeed,
#      among them a shuffle into 20,000 partitions in those small executors, each checked by count and sum;
#   2. the jar given only with --jars: the driver fails at start with a message naming extraClassPath, instead of
#      executors dying with ClassNotFoundException and being relaunched without end.
# Needs a build first (build/test.sh, or mvn verify -pl client-spark/spark-3-shaded,tests-spark/servers -am
# -DskipTests). Usage: build/spark-submit/check.sh   (ESTUARY_PYSPARK_VENV: where the venv is kept; created on
# first use, about 320 MB from PyPI; --tools-only creates it and checks nothing, so CI can fetch it during the build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
version=$(sed -n 's:.*<version>\(.*\)</version>.*:\1:p' "$root/pom.xml" | head -1)
jar="$root/client-spark/spark-3-shaded/target/estuary-client-spark-3-shaded_2.12-$version.jar"
cpfile="$root/tests-spark/servers/target/server.classpath"
venv=${ESTUARY_PYSPARK_VENV:-$HOME/.cache/estuary/pyspark-3.5.8}
if [[ ! -x $venv/bin/spark-submit ]]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q pyspark==3.5.8
fi
[[ ${1:-} == --tools-only ]] && { echo "spark-submit check: PySpark ready in $venv"; exit 0; }
for f in "$jar" "$cpfile"; do
  [[ -f $f ]] || { echo "missing $f: build first (see the header of this script)" >&2; exit 2; }
done
export SPARK_LOCAL_IP=127.0.0.1 PYSPARK_PYTHON="$venv/bin/python"
unset SPARK_HOME
work=$(mktemp -d)
pids=()
# shellcheck disable=SC2317 # run by the EXIT trap below
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cp=$(cat "$cpfile")
# Authentication is on by default: the servers share a cluster secret (mode 600, as they require) and answer the
# admin API with a token; the Spark driver makes its application's secret itself.
(
  umask 077
  head -c 32 /dev/urandom | base64 | tr -d '\n' > "$work/cluster.secret"
  head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/admin.token"
)
auth=(-Destuary.auth.cluster.secretFile="$work/cluster.secret" -Destuary.auth.admin.tokenFile="$work/admin.token")
status_json() { curl -sf -H "Authorization: Bearer $(cat "$work/admin.token")" "http://127.0.0.1:$mhttp/api/status"; }
mport=$(free_port); mhttp=$(free_port)
mkdir -p "$work/conf"
ESTUARY_CONF_DIR="$work/conf" java -Xmx256m -cp "$cp" "${auth[@]}" -Destuary.master.host=127.0.0.1 \
  -Destuary.master.port="$mport" -Destuary.master.http.port="$mhttp" io.estuary.master.Master > "$work/master.log" 2>&1 &
pids+=($!)
wr=$(free_port); wp=$(free_port); wf=$(free_port)
ESTUARY_CONF_DIR="$work/conf" java -Xmx384m -cp "$cp" "${auth[@]}" -Destuary.master.endpoints="127.0.0.1:$mport" \
  -Destuary.worker.host=127.0.0.1 -Destuary.worker.rpc.port="$wr" -Destuary.worker.push.port="$wp" \
  -Destuary.worker.fetch.port="$wf" -Destuary.worker.http.port=0 -Destuary.worker.storage.dirs="$work/disk" \
  -Destuary.worker.disk.reserve=0 io.estuary.worker.Worker > "$work/worker.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 600); do
  status_json | grep -q "127.0.0.1:$wr:" && break
  sleep 0.1
done
status_json | grep -q "127.0.0.1:$wr:" || {
  echo "the worker did not register; logs:"; tail -n 20 "$work/master.log" "$work/worker.log"; exit 1; }

common=(--master 'local-cluster[2,1,512]' --conf spark.executor.memory=512m --conf spark.shuffle.manager=org.apache.spark.shuffle.estuary.EstuaryShuffleManager
  --conf spark.estuary.master.endpoints="127.0.0.1:$mport" --conf spark.estuary.auth.enabled=true
  --conf spark.ui.enabled=false)
status=0

start=$(date +%s)
# 600 s: on a loaded machine some pushes to the single small worker of the 20,000-partition shuffle have gone
# unanswered until the client's push timeout (240 s), after which the job recovers and passes (a stall still to be
# found); the check is of the README way of submitting, which then still works.
if timeout 600 "$venv/bin/spark-submit" "${common[@]}" --conf spark.driver.extraClassPath="$jar" \
    --conf spark.executor.extraClassPath="$jar" "$here/job.py" > "$work/right.log" 2>&1 \
    && grep -q "CHECK OK" "$work/right.log"; then
  echo "README way (extraClassPath): job OK in $(( $(date +%s) - start )) s"
else
  echo "README way (extraClassPath): FAILED"; tail -40 "$work/right.log"; status=1
  echo "the driver's and executors' warnings:"; grep -h -E " (WARN|ERROR) .*[Ee]stuary" "$work/right.log" | head -40 || true
  echo "the master's and the worker's warnings:"
  grep -h -E "WARN|ERROR|Exception" "$work/master.log" "$work/worker.log" | head -60 || true
fi

start=$(date +%s)
set +e
timeout 180 "$venv/bin/spark-submit" "${common[@]}" --jars "$jar" "$here/job.py" > "$work/wrong.log" 2>&1
rc=$?
set -e
took=$(( $(date +%s) - start ))
if [[ $rc -ne 0 && $rc -ne 124 ]] && grep -q "spark.executor.extraClassPath" "$work/wrong.log"; then
  echo "--jars only: failed fast as it should, in $took s, saying:"
  grep -m1 -o "Estuary's shuffle manager was loaded from an application jar.*" "$work/wrong.log" | cut -c1-400
else
  echo "--jars only: did not fail fast with the message (exit $rc after $took s)"; tail -40 "$work/wrong.log"; status=1
fi
exit $status
