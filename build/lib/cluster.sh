# shellcheck shell=bash
# A local Estuary cluster on loopback, for the scripts that start one (build/local-cluster.sh, bench/chaos.sh,
# bench/rolling-restart.sh) and those that wait for one (build/check-deploy.sh). Source it; it defines functions
# only. Readiness comes from the CLI (`bin/estuary --json ...`, the masters' admin views), never from log text.
#
# The caller sets, before calling the functions:
#   ESTUARY_HOME         the distribution the servers and the CLI run from (its sbin/, bin/, conf/)
#   ESTUARY_LOG_DIR      where the servers log and keep their pid files
#   CLUSTER_WORK         a directory for each server's conf dir (conf-master, conf-worker<i>) and disks
#   CLUSTER_MASTER       the master's RPC endpoint (host:port), written into every server's configuration
#   CLUSTER_MASTER_HTTP  the masters' HTTP endpoints (host:port[,host:port...]) the CLI asks
#   CLUSTER_AUTH         true (the default) or false: authentication on every server, with a cluster secret made
#                        once in CLUSTER_WORK/cluster.secret (mode 600); Spark drivers then need
#                        $(cluster_spark_auth_opts) among their JVM options
#   CLUSTER_TLS          false (the default) or true: TLS on every port group of every server, with a CA and a
#                        certificate for 127.0.0.1 made in CLUSTER_WORK/tls; Spark drivers then need each line of
#                        $(cluster_spark_tls_opts) among their JVM options
#   CLUSTER_WORKER_CONF  more lines for every worker's estuary-defaults.conf (e.g. to turn a feature off for an
#                        A/B run); none by default
# Each worker i listens on four consecutive ports from its first one (rpc, push, fetch, http), so its id is
# 127.0.0.1:p:p+1:p+2. Needs python3 to read the CLI's JSON.

# cluster_secret_file: the cluster secret every server of CLUSTER_WORK shares, made the first time (so restarted
# servers keep it) by the distribution's `bin/estuary secret generate`, or, from a distribution whose CLI cannot,
# in the same format (32 random bytes in base64); readable by its owner only, as servers require. Prints its path.
cluster_secret_file() {
  local f=$CLUSTER_WORK/cluster.secret
  if [ ! -s "$f" ]; then
    (
      umask 077
      if ! "$ESTUARY_HOME/bin/estuary" secret generate >"$f.new" 2>/dev/null || [ ! -s "$f.new" ]; then
        head -c 32 /dev/urandom | base64 | tr -d '\n' >"$f.new"
      fi
      chmod 600 "$f.new"
      mv "$f.new" "$f"
    )
  fi
  echo "$f"
}

# cluster_admin_token_file: the admin HTTP token of CLUSTER_WORK's servers (estuary.auth.admin.tokenFile), made the
# first time: 32 random hex characters, readable by its owner only. Prints its path.
cluster_admin_token_file() {
  local f=$CLUSTER_WORK/admin.token
  if [ ! -s "$f" ]; then
    (
      umask 077
      head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$f.new"
      mv "$f.new" "$f"
    )
  fi
  echo "$f"
}

# cluster_auth_conf: the authentication lines of every server's estuary-defaults.conf (CLUSTER_AUTH).
cluster_auth_conf() {
  if [ "${CLUSTER_AUTH:-true}" = true ]; then
    printf 'estuary.auth.enabled true\nestuary.auth.cluster.secretFile %s\nestuary.auth.admin.tokenFile %s\n' \
      "$(cluster_secret_file)" "$(cluster_admin_token_file)"
  else
    echo 'estuary.auth.enabled false'
  fi
}

# cluster_tls_dir: a CA and one certificate for 127.0.0.1 signed by it (CLUSTER_WORK/tls: ca.crt, tls.crt, tls.key
# in PKCS#8 PEM, as cert-manager writes them), made the first time with openssl. Prints the directory.
cluster_tls_dir() {
  local d=$CLUSTER_WORK/tls
  if [ ! -s "$d/tls.crt" ]; then
    mkdir -p "$d"
    (
      umask 077
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj /CN=estuary-test-ca \
        -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
        -keyout "$d/tls.key" -out "$d/tls.csr" 2>/dev/null
      printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$d/san.ext"
      openssl x509 -req -in "$d/tls.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 30 \
        -extfile "$d/san.ext" -out "$d/tls.crt" 2>/dev/null
    )
  fi
  echo "$d"
}

# cluster_tls_conf: the TLS lines of every server's estuary-defaults.conf: with CLUSTER_TLS=true every port group
# (internal, data, application) on, with cluster_tls_dir's certificate; nothing otherwise.
cluster_tls_conf() {
  [ "${CLUSTER_TLS:-false}" = true ] || return 0
  local d g
  d=$(cluster_tls_dir)
  for g in internal data application; do
    printf 'estuary.tls.%s.enabled true\nestuary.tls.%s.certFile %s\nestuary.tls.%s.keyFile %s\n' \
      "$g" "$g" "$d/tls.crt" "$g" "$d/tls.key"
    printf 'estuary.tls.%s.trustFile %s\n' "$g" "$d/ca.crt"
  done
}

# cluster_spark_tls_opts: the JVM options (one per line; none without CLUSTER_TLS=true) that give a Spark driver on
# this cluster its TLS settings: it trusts the cluster's CA and presents the same certificate on its own port.
cluster_spark_tls_opts() {
  [ "${CLUSTER_TLS:-false}" = true ] || return 0
  local d g
  d=$(cluster_tls_dir)
  for g in internal data application; do
    printf -- '-Dspark.estuary.tls.%s.enabled=true\n-Dspark.estuary.tls.%s.trustFile=%s\n' "$g" "$g" "$d/ca.crt"
    printf -- '-Dspark.estuary.tls.%s.certFile=%s\n-Dspark.estuary.tls.%s.keyFile=%s\n' \
      "$g" "$d/tls.crt" "$g" "$d/tls.key"
  done
}

# cluster_spark_auth_opts: the JVM option that gives a Spark driver on this cluster the same authentication setting
# (SparkConf reads spark.* system properties); with authentication on, the driver makes its application's secret.
cluster_spark_auth_opts() {
  echo "-Dspark.estuary.auth.enabled=${CLUSTER_AUTH:-true}"
}

# cluster_conf_dir NAME LINES: a conf dir for one server (log4j2.xml from the distribution, the master endpoint,
# authentication (cluster_auth_conf) and LINES as estuary-defaults.conf); prints its path.
cluster_conf_dir() {
  local d=$CLUSTER_WORK/conf-$1 auth tls
  mkdir -p "$d"
  cp "$ESTUARY_HOME/conf/log4j2.xml.template" "$d/log4j2.xml"
  auth=$(cluster_auth_conf)
  tls=$(cluster_tls_conf)
  printf 'estuary.master.endpoints %s\n%s\n%s\n%s\n' "$CLUSTER_MASTER" "$auth" "$tls" "$2" > "$d/estuary-defaults.conf"
  echo "$d"
}

# cluster_start_master PORT HTTP_PORT: the master (instance 1) on 127.0.0.1.
cluster_start_master() {
  local d
  d=$(cluster_conf_dir master "estuary.master.host 127.0.0.1
estuary.master.port $1
estuary.master.http.port $2")
  ESTUARY_CONF_DIR=$d ESTUARY_INSTANCE=1 "$ESTUARY_HOME/sbin/start-master.sh"
}

cluster_stop_master() {
  ESTUARY_CONF_DIR=$CLUSTER_WORK/conf-master ESTUARY_INSTANCE=1 "$ESTUARY_HOME/sbin/stop-master.sh"
}

# cluster_worker_conf I FIRST_PORT [HEARTBEAT]: worker i's conf dir (its disk under CLUSTER_WORK); prints its path.
cluster_worker_conf() {
  local p=$2
  cluster_conf_dir "worker$1" "estuary.worker.host 127.0.0.1
estuary.worker.rpc.port $p
estuary.worker.push.port $((p + 1))
estuary.worker.fetch.port $((p + 2))
estuary.worker.http.port $((p + 3))
estuary.worker.storage.dirs $CLUSTER_WORK/disk-worker$1
estuary.worker.disk.reserve 0
estuary.worker.heartbeat.interval ${3:-2s}${CLUSTER_WORKER_CONF:+
$CLUSTER_WORKER_CONF}"
}

# cluster_start_worker I FIRST_PORT [HEARTBEAT]: starts worker i (same ports and disk every time); does not wait.
cluster_start_worker() {
  local d
  d=$(cluster_worker_conf "$1" "$2" "${3:-2s}")
  ESTUARY_CONF_DIR=$d ESTUARY_INSTANCE=$1 "$ESTUARY_HOME/sbin/start-worker.sh"
}

# cluster_stop_worker I: a graceful stop (SIGTERM, then sbin's timeout); prints what stop-worker.sh says.
cluster_stop_worker() {
  ESTUARY_CONF_DIR=$CLUSTER_WORK/conf-worker$1 ESTUARY_INSTANCE=$1 "$ESTUARY_HOME/sbin/stop-worker.sh"
}

# cluster_worker_id FIRST_PORT: the id the master knows worker by.
cluster_worker_id() {
  echo "127.0.0.1:$1:$(($1 + 1)):$(($1 + 2))"
}

# cluster_cli ARGS...: bin/estuary against CLUSTER_MASTER_HTTP, with the master's configuration: with authentication
# on, the CLI derives the admin token from the cluster secret file it names, as an operator's would.
# Without CLUSTER_WORK (servers this library did not start), the caller's environment decides.
cluster_cli() {
  if [ -n "${CLUSTER_WORK:-}" ]; then
    ESTUARY_CONF_DIR=$CLUSTER_WORK/conf-master "$ESTUARY_HOME/bin/estuary" --master "$CLUSTER_MASTER_HTTP" "$@"
  else
    "$ESTUARY_HOME/bin/estuary" --master "$CLUSTER_MASTER_HTTP" "$@"
  fi
}

# cluster_json EXPRESSION: evaluates a Python expression over the JSON document on stdin (as j) and prints it;
# prints nothing (and fails) when stdin is not JSON.
cluster_json() {
  python3 -c 'import json, sys
j = json.load(sys.stdin)
v = eval(sys.argv[1])
print("" if v is None else (str(v).lower() if isinstance(v, bool) else v))' "$1" 2>/dev/null
}

# cluster_worker_state WORKER_ID: its state at the master (ACTIVE, EXCLUDED, DECOMMISSIONING, SHUTTING_DOWN), or
# nothing while the master does not answer or does not know it.
cluster_worker_state() {
  cluster_cli --json workers 2>/dev/null \
    | cluster_json "next((w['state'] for w in j['workers'] if w['id'] == '$1'), None)" || true
}

# cluster_active_workers: how many workers the master holds ACTIVE (nothing while it does not answer).
cluster_active_workers() {
  cluster_cli --json status 2>/dev/null | cluster_json "j['workersByState'].get('ACTIVE', 0)" || true
}

# cluster_wait_active N SECONDS: waits until at least N workers are ACTIVE at the master; fails after SECONDS.
cluster_wait_active() {
  local deadline=$((SECONDS + $2)) n
  while :; do
    n=$(cluster_active_workers)
    [ "${n:-0}" -ge "$1" ] && return 0
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.5
  done
}

# cluster_wait_worker_state WORKER_ID STATE SECONDS: waits until the master holds the worker in STATE.
cluster_wait_worker_state() {
  local deadline=$((SECONDS + $3))
  while :; do
    [ "$(cluster_worker_state "$1")" = "$2" ] && return 0
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.5
  done
}

# cluster_wait_master SECONDS: waits until a master answers the CLI (and leads, or is the single master).
cluster_wait_master() {
  local deadline=$((SECONDS + $1))
  while :; do
    [ "$(cluster_cli --json status 2>/dev/null | cluster_json "j['leader'] is not None")" = true ] && return 0
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.5
  done
}

# cluster_worker_own_state FIRST_PORT: the state worker says of itself in its /api/status (REGISTERING until the
# master accepted its registration, then ACTIVE, DECOMMISSIONING, ...), or nothing while it does not answer. A
# restarted worker is back once this says ACTIVE again (the master may have held it ACTIVE throughout).
cluster_worker_own_state() {
  local auth=()
  [ "${CLUSTER_AUTH:-true}" = true ] && auth=(-H "Authorization: Bearer $(cat "$(cluster_admin_token_file)")")
  curl -s --max-time 5 "${auth[@]}" "http://127.0.0.1:$(($1 + 3))/api/status" 2>/dev/null \
    | cluster_json "j['state']" || true
}
