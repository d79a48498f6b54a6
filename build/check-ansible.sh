#!/usr/bin/env bash
# CI proof of deploy/ansible: a rolling upgrade of a live cluster from the previous release to this build, and a
# rolling downgrade back, while Spark jobs run; then the upgrade again turning authentication on (permissive, then
# enforced).
#
# 1. ansible-lint on deploy/ansible (ansible-core and ansible-lint are installed into a venv if missing);
# 2. version A is the previous release, built from the commit CHANGELOG.md names (build/previous-release.sh, cached
#    by commit); version B is this build (dist/, built if needed). Without an earlier release (CHANGELOG.md names
#    only HEAD) A is this build and B the same build repackaged under another version string, and no downgrade runs;
# 3. an inventory of 3 masters (a Raft group) and 3 workers, all on loopback (ansible_connection=local), each
#    with its own install root, conf, log, pid and data directories and its own ports;
# 4. install.yml + start.yml with version A, then Spark jobs back to back in the background
#    (io.estuary.bench.ChaosJob: a TeraSort-like sort with replication, checked by count and an order-independent
#    checksum against the generator's), their client jar alternating between A's and B's; rolling-upgrade.yml to
#    version B; once a job that started after the upgrade has ended, rolling-upgrade.yml back to version A; all of
#    this with authentication off (0.1.0 has none);
# 5. unless CHECK_ANSIBLE_AUTH=0, authentication on, the path of docs/upgrading.md: rolling-upgrade.yml from A to B
#    again, now with estuary_auth_enabled=true and estuary_auth_mode=permissive (every server restarted when there
#    was no downgrade), while jobs of both clients run; once every server
#    admits both, B's client authenticates (spark.estuary.auth.enabled=true) and A's stops; then every server
#    restarted with estuary_auth_mode=enforce while B's authenticating jobs run; then one job of A's client must be
#    refused;
# 6. checks: every job of the loop ok (0 failed, 0 wrong, 0 stage reruns), jobs ran before, during and after the
#    upgrade and during the downgrade and each authentication pass, every master and worker reports the version it
#    was rolled to in GET /api/status (with the admin token once authentication is on, and refuses it without) and
#    runs from its folder, the permissive servers counted the unauthenticated clients they admitted; prints the
#    figures.
#
# Usage: build/check-ansible.sh
# Environment: ANSIBLE_VENV (default ~/.cache/estuary/ansible-venv), CHECK_ANSIBLE_PORT_BASE (19800: master i on
# base+10i..+2, worker i on base+30+10i..+3), CHECK_ANSIBLE_GB (0.2 GB per job), DRIVER_MEMORY (1g),
# CHECK_ANSIBLE_KEEP=1 keeps the work directory, CHECK_ANSIBLE_SAME_BUILD=1 skips the previous release,
# CHECK_ANSIBLE_AUTH=0 skips the authentication passes (step 5).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
venv=${ANSIBLE_VENV:-$HOME/.cache/estuary/ansible-venv}
port=${CHECK_ANSIBLE_PORT_BASE:-19800}
gb=${CHECK_ANSIBLE_GB:-0.2}
auth_passes=${CHECK_ANSIBLE_AUTH:-1}
[ "$auth_passes" = 0 ] && auth_passes=
export DRIVER_MEMORY=${DRIVER_MEMORY:-1g}

# --- tools ---------------------------------------------------------------------------------------------------
if [ ! -x "$venv/bin/ansible-playbook" ] || [ ! -x "$venv/bin/ansible-lint" ]; then
  echo "installing ansible-core and ansible-lint into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q 'ansible-core>=2.19,<2.20' 'ansible-lint>=26,<27'
fi
export PATH=$venv/bin:$PATH
export ANSIBLE_CONFIG=$root/deploy/ansible/ansible.cfg
(cd deploy/ansible && ansible-lint --nocolor -q) || { echo "ansible-lint found problems" >&2; exit 1; }
echo "ansible-lint: clean"

{ [ -d dist/jars ] && [ -f dist/VERSION ] && ls dist/spark/estuary-client-spark-3-shaded_2.12-*.jar >/dev/null 2>&1 \
  && ls dist/estuary-*-bin.tar.gz >/dev/null 2>&1 \
  && [ -f bench/target/classes/io/estuary/bench/ChaosJob.class ]; } || build/make-dist.sh

work=$(mktemp -d /tmp/estuary-ansible.XXXXXX)
mkdir -p "$work/drivers" "$work/tmp"
loop_pid=""
ok=0

ours() { local c; c=$(tr '\0' ' ' 2>/dev/null < "/proc/$1/cmdline") || return 1; [[ "$c" == *"$work"* ]]; }
cleanup() {
  local rc=$? p pids=""
  set +e
  trap - EXIT INT TERM
  touch "$work/stop"
  [ -n "$loop_pid" ] && { pkill -9 -P "$loop_pid"; kill -9 "$loop_pid"; wait "$loop_pid"; } 2>/dev/null
  for f in "$work"/*/pid/*.pid; do
    [ -f "$f" ] || continue
    p=$(cat "$f")
    ours "$p" && kill "$p" 2>/dev/null && pids="$pids $p"
  done
  for _ in $(seq 1 40); do
    local left=""
    for p in $pids; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
    [ -z "$left" ] && break
    sleep 0.5
  done
  for p in $pids; do kill -9 "$p" 2>/dev/null; done
  if [ "$ok" -ne 1 ] || [ -n "${CHECK_ANSIBLE_KEEP:-}" ]; then
    echo "work directory kept: $work (per host: */logs; drivers: drivers/; ansible: *.ansible.log)"
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- versions A and B -------------------------------------------------------------------------------------------
override=""
dist_b=$root/dist
version_b=$(cat dist/VERSION)
tarball_b=$(ls "$dist_b"/estuary-"$version_b"-bin.tar.gz)
dist_a=""
if [ -z "${CHECK_ANSIBLE_SAME_BUILD:-}" ]; then
  rc=0
  dist_a=$(build/previous-release.sh) || rc=$?
  if [ "$rc" = 3 ]; then dist_a=""; elif [ "$rc" != 0 ]; then exit "$rc"; fi
fi
if [ -n "$dist_a" ]; then
  version_a=$(cat "$dist_a/VERSION")
  tarball_a=$(ls "$dist_a"/estuary-"$version_a"-bin.tar.gz)
  downgrade=yes
else
  # The same build under two version strings: dist/VERSION and estuary-version.properties in the server jars.
  dist_a=$dist_b
  version_a=$version_b
  tarball_a=$tarball_b
  version_b=$version_a-upgrade
  downgrade=""
  stage=$work/stage/estuary-$version_b
  mkdir -p "$stage"
  (cd dist && tar --exclude='./*.tar.gz' -cf - .) | tar -C "$stage" -xf -
  echo "$version_b" > "$stage/VERSION"
  stamped=0
  mkdir -p "$work/props"
  for jar in "$stage"/jars/estuary-*.jar; do
    if unzip -p "$jar" estuary-version.properties > "$work/props/estuary-version.properties" 2>/dev/null \
        && grep -q '^version=' "$work/props/estuary-version.properties"; then
      sed -i "s/^version=.*/version=$version_b/" "$work/props/estuary-version.properties"
      (cd "$work/props" && jar uf "$jar" estuary-version.properties)
      stamped=$((stamped + 1))
    fi
  done
  [ "$stamped" -gt 0 ] || override=yes
  tarball_b=$work/estuary-$version_b-bin.tar.gz
  tar -C "$work/stage" -czf "$tarball_b" "estuary-$version_b"
  rm -rf "$work/stage"
fi
echo "version A: $version_a ($dist_a), version B: $version_b ($tarball_b)${downgrade:+, then back to A}"

# --- inventory: 3 masters and 3 workers on loopback -------------------------------------------------------------
inv=$work/inventory.yml
{
  echo "all:"
  echo "  vars:"
  echo "    ansible_connection: local"
  echo "    ansible_python_interpreter: \"{{ ansible_playbook_python }}\""
  echo "    estuary_host: 127.0.0.1"
  echo "    estuary_master_memory: 256m"
  echo "    estuary_worker_memory: 384m"
  echo "    estuary_worker_offheap_memory: 768m"
  echo "    estuary_stop_timeout: 60"
  # The first pass from 0.1.0 (docs/upgrading.md): 0.1.0 cannot authenticate, and masters that authenticate Raft
  # cannot form a group with 0.1.0 masters, so the upgrade itself runs with authentication off.
  echo "    estuary_auth_enabled: false"
  echo "    estuary_ready_timeout: 90"
  echo "    estuary_worker_conf:"
  echo "      estuary.worker.disk.reserve: 0"
  echo "      estuary.worker.heartbeat.interval: 1s"
  echo "      estuary.worker.memory.maxBuffered: 256m"
  echo "  children:"
  for role in masters workers; do
    echo "    estuary_$role:"
    echo "      hosts:"
    for i in 1 2 3; do
      if [ "$role" = masters ]; then h=m$i; p=$((port + 10 * i)); else h=w$i; p=$((port + 30 + 10 * i)); fi
      d=$work/$h
      echo "        $h:"
      echo "          estuary_instance: $i"
      echo "          estuary_install_root: $d/install"
      echo "          estuary_conf_dir: $d/conf"
      echo "          estuary_log_dir: $d/logs"
      echo "          estuary_pid_dir: $d/pid"
      echo "          estuary_data_dir: $d/data"
      if [ "$role" = masters ]; then
        echo "          estuary_master_id: m$i"
        echo "          estuary_master_port: $p"
        echo "          estuary_master_http_port: $((p + 1))"
        echo "          estuary_master_raft_port: $((p + 2))"
      else
        echo "          estuary_worker_rpc_port: $p"
        echo "          estuary_worker_push_port: $((p + 1))"
        echo "          estuary_worker_fetch_port: $((p + 2))"
        echo "          estuary_worker_http_port: $((p + 3))"
      fi
    done
  done
} > "$inv"
masters_ep=127.0.0.1:$((port + 10)),127.0.0.1:$((port + 20)),127.0.0.1:$((port + 30))

playbook() { # log name, playbook, extra args
  local name=$1 book=$2
  shift 2
  # The log file has a time stamp per line (where the time went).
  if ! ANSIBLE_LOG_PATH=$work/$name.timed.log ansible-playbook -i "$inv" "deploy/ansible/$book" "$@" \
      > "$work/$name.ansible.log" 2>&1; then
    tail -n 60 "$work/$name.ansible.log" >&2
    echo "$book failed; see $work/$name.ansible.log" >&2
    return 1
  fi
}

# --- version A up ----------------------------------------------------------------------------------------------
t0=$(date +%s)
playbook install install.yml -e "estuary_version=$version_a" -e "estuary_release_dir=$dist_a" \
  ${override:+-e "estuary_version_override=$version_a"}
playbook start start.yml
echo "cluster up with $version_a: 3 masters, 3 workers ($(($(date +%s) - t0)) s)"

# --- jobs in the background -------------------------------------------------------------------------------------
ESTUARY_HOME=$dist_b SPARK_LOCAL_IP=127.0.0.1 build/spark-driver.sh -Djava.io.tmpdir="$work/tmp" \
  io.estuary.bench.ChaosJob expect "$gb" > "$work/drivers/expected.log" 2>&1 \
  || { cat "$work/drivers/expected.log" >&2; exit 1; }
expected=$(sed -n 's/^EXPECTED //p' "$work/drivers/expected.log")
[ -n "$expected" ] || { cat "$work/drivers/expected.log" >&2; exit 1; }
echo "each job: $gb GB sorted, expected (count checksum): $expected"

# One job after another until $work/stop exists, odd ones with A's client jar and even ones with B's (B's only once
# $work/b-only exists; B's authenticates once $work/client-auth exists: "<B>+auth"); per job started: "<n> <client>"
# in $work/started, and once it ended: "<n> <start s> <end s> <client> RESULT ..." in $work/jobs.txt.
job_loop() {
  local n=0 out line s home client opts
  while [ ! -f "$work/stop" ]; do
    n=$((n + 1))
    if [ $((n % 2)) = 1 ] && [ ! -f "$work/b-only" ]; then
      home=$dist_a; client=$version_a; opts=""
    elif [ -f "$work/client-auth" ]; then
      home=$dist_b; client=$version_b+auth; opts=-Dspark.estuary.auth.enabled=true
    else
      home=$dist_b; client=$version_b; opts=-Dspark.estuary.auth.enabled=false
    fi
    echo "$n $client" >> "$work/started"
    out=$work/drivers/job-$n.log
    s=$(date +%s)
    # shellcheck disable=SC2086
    ESTUARY_HOME=$home SPARK_LOCAL_IP=127.0.0.1 timeout 600 build/spark-driver.sh -Djava.io.tmpdir="$work/tmp" \
      $opts io.estuary.bench.ChaosJob "$masters_ep" "$gb" true $expected > "$out" 2>&1 || true
    line=$(grep '^RESULT' "$out" | tail -1 || true)
    [ -n "$line" ] || line="RESULT failed (driver died or hung; see $out)"
    echo "$n $s $(date +%s) $client $line" >> "$work/jobs.txt"
  done
}
touch "$work/jobs.txt" "$work/started"
job_loop &
loop_pid=$!
# The upgrade starts once the first job runs (its Spark context is up and it has begun shuffling).
for _ in $(seq 1 120); do
  grep -q JOB_START "$work/drivers/job-1.log" 2>/dev/null && break
  sleep 0.5
done
grep -q JOB_START "$work/drivers/job-1.log" || { echo "the first job did not start" >&2; exit 1; }

# rolling_to VERSION TARBALL [LOG]: the rolling upgrade playbook to that release.
rolling_to() {
  playbook "${3:-to-$1}" rolling-upgrade.yml -e "estuary_version=$1" -e "estuary_release_tarball=$2" \
    ${override:+-e "estuary_version_override=$1"}
}
# rolling_auth MODE: every server restarted on version B with authentication on in MODE (permissive, enforce).
rolling_auth() {
  playbook "auth-$1" rolling-upgrade.yml -e "estuary_version=$version_b" -e "estuary_release_tarball=$tarball_b" \
    ${override:+-e "estuary_version_override=$version_b"} -e estuary_auth_enabled=true -e "estuary_auth_mode=$1" \
    -e estuary_upgrade_restart_all=true
}
# jobs_between A B: how many jobs ran for part of [A, B].
jobs_between() { awk -v a="$1" -v b="$2" '$2 <= b && $3 >= a' "$work/jobs.txt" | wc -l; }
# wait_job_after T [CLIENT]: waits until a job (of CLIENT) that started at T or later has ended.
wait_job_after() {
  for _ in $(seq 1 600); do
    [ "$(awk -v t="$1" -v c="${2:-}" '$2 >= t && (c == "" || $4 == c)' "$work/jobs.txt" | wc -l)" -ge 1 ] && return 0
    sleep 1
  done
  echo "FAIL: no job${2:+ of $2} that started after $1 ended within 600 s" >&2
  return 1
}

# check_versions WANT [auth]: every server reports WANT and runs from estuary-WANT. With "auth", every server
# answers GET /api/status only with the admin token (the role made it next to the inventory); without, every server
# answers although the call carries a token of no cluster (a server that does not authenticate ignores it).
check_versions() {
  local want=$1 auth=${2:-} versions off h target bad=0
  versions=$(python3 - "$port" "$want" "${auth:+$work/estuary-admin.token}" <<'PY'
import json, sys, urllib.error, urllib.request
port, want, token_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
token = open(token_file).read().strip() if token_file else "not-a-token-of-this-cluster"
bad = 0
for kind, first in (("master", port + 11), ("worker", port + 43)):
    for i in range(3):
        url = "http://127.0.0.1:%d/api/status" % (first + 10 * i)
        try:
            req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
            s = json.load(urllib.request.urlopen(req, timeout=10))
            v = s.get("version", "not reported")
        except Exception as e:
            v = "unreachable (%s)" % e
        if token_file:
            try:
                urllib.request.urlopen(url, timeout=10)
                v += ", but answers without the admin token"
            except urllib.error.HTTPError as e:
                if e.code != 401:
                    v += ", but answers %d without the admin token" % e.code
            except Exception as e:
                v += ", but unreachable without the token (%s)" % e
        print("  %s%d: %s" % (kind, i + 1, v))
        bad += v != want
print("NODES_OFF_VERSION %d" % bad)
PY
)
  echo "versions reported after rolling to $want${auth:+ (admin token required)}:"
  echo "$versions" | grep -v NODES_OFF_VERSION
  off=$(echo "$versions" | sed -n 's/^NODES_OFF_VERSION //p')
  [ "$off" = 0 ] || { echo "FAIL: $off nodes do not report $want" >&2; bad=1; }
  for h in m1 m2 m3 w1 w2 w3; do
    target=$(readlink "$work/$h/install/current")
    [ "$target" = "$work/$h/install/estuary-$want" ] || { echo "FAIL: $h current -> $target" >&2; bad=1; }
  done
  return "$bad"
}

# admitted_count: how many clients the servers let in without an identity (permissive mode), summed over servers.
admitted_count() {
  python3 - "$port" <<'PY'
import re, sys, urllib.request
port = int(sys.argv[1])
total = 0
for first in (port + 11, port + 43):
    for i in range(3):
        text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % (first + 10 * i), timeout=10).read().decode()
        for m in re.finditer(r"^estuary_\w+_unauthenticated_admitted_total(?:\{[^}]*\})? (\S+)$", text, re.M):
            total += float(m.group(1))
print(int(total))
PY
}

fail=0
# --- the rolling upgrade ----------------------------------------------------------------------------------------
u0=$(date +%s)
rolling_to "$version_b" "$tarball_b"
u1=$(date +%s)
check_versions "$version_b" || fail=1
if [ -n "$downgrade" ]; then
  # A job that started on the upgraded cluster must end before the downgrade (jobs "after" the upgrade).
  for _ in $(seq 1 600); do
    [ "$(awk -v u="$u1" '$2 >= u' "$work/jobs.txt" | wc -l)" -ge 1 ] && break
    sleep 1
  done
  # --- the rolling downgrade ------------------------------------------------------------------------------------
  d0=$(date +%s)
  rolling_to "$version_a" "$tarball_a"
  d1=$(date +%s)
  check_versions "$version_a" || fail=1
fi

# --- authentication on: docs/upgrading.md's two passes -----------------------------------------------------------
if [ -n "$auth_passes" ]; then
  # Pass 1: A to B with authentication permissive (after the downgrade; without one, B restarted permissive), while
  # both clients' jobs run (neither authenticates yet).
  p0=$(date +%s)
  rolling_auth permissive
  p1=$(date +%s)
  check_versions "$version_b" auth || fail=1
  # Clients the permissive servers let in without an identity (A's, and B's not yet authenticating).
  admitted=$(admitted_count) || admitted=0
  [ "$admitted" -ge 1 ] || { echo "FAIL: the permissive servers counted no unauthenticated client" >&2; fail=1; }
  # Every server admits both kinds of clients now: B's authenticates from here on, and A's (which cannot pass
  # enforcement) starts no more jobs. A job of B's authenticating client ends on the permissive cluster, and the last
  # job of A's client ends, before enforcement.
  touch "$work/client-auth" "$work/b-only"
  wait_job_after "$p1" "$version_b+auth" || fail=1
  # (bounded: a job times out after 600 s)
  while [ "$(awk -v c="$version_a" '$2 == c' "$work/started" | wc -l)" -gt \
      "$(awk -v c="$version_a" '$4 == c' "$work/jobs.txt" | wc -l)" ]; do
    sleep 1
  done
  # Pass 2: enforce, while jobs of B's authenticating client run.
  e0=$(date +%s)
  rolling_auth enforce
  e1=$(date +%s)
  check_versions "$version_b" auth || fail=1
  wait_job_after "$e1" "$version_b+auth" || fail=1
fi
touch "$work/stop"
wait "$loop_pid" || true
loop_pid=""
refused=""
if [ -n "$auth_passes" ] && [ -n "$downgrade" ]; then
  # A's client (0.1.0, no authentication) on the enforcing cluster: refused, and its job fails rather than hangs.
  out=$work/drivers/job-refused.log
  r0=$(date +%s)
  # shellcheck disable=SC2086
  ESTUARY_HOME=$dist_a SPARK_LOCAL_IP=127.0.0.1 timeout 300 build/spark-driver.sh -Djava.io.tmpdir="$work/tmp" \
    io.estuary.bench.ChaosJob "$masters_ep" "$gb" true $expected > "$out" 2>&1 || true
  r1=$(date +%s)
  # 0.1.0 knows no authentication: an enforcing server refuses its protocol (5), which it reports as a mismatch.
  refused=$(grep -m1 -o -E '(UNAUTHENTICATED|VERSION_MISMATCH|version mismatch|refused|authenticat)[^"]{0,160}' \
    "$out" || true)
  if grep -q '^RESULT ok' "$out"; then
    echo "FAIL: a job of $version_a's client succeeded on the enforcing cluster; see $out" >&2; fail=1
  elif [ $((r1 - r0)) -ge 300 ]; then
    echo "FAIL: a job of $version_a's client hung on the enforcing cluster (300 s); see $out" >&2; fail=1
  elif [ -z "$refused" ]; then
    echo "FAIL: a job of $version_a's client failed on the enforcing cluster without saying why; see $out" >&2
    fail=1
  fi
fi

# --- checks -----------------------------------------------------------------------------------------------------
jobs_total=$(wc -l < "$work/jobs.txt")
jobs_ok=$(grep -c ' RESULT ok ' "$work/jobs.txt" || true)
jobs_wrong=$(grep -c ' RESULT wrong ' "$work/jobs.txt" || true)
jobs_failed=$((jobs_total - jobs_ok - jobs_wrong))
before=$(awk -v a="$u0" '$2 < a' "$work/jobs.txt" | wc -l)
during=$(jobs_between "$u0" "$u1")
after=$(awk -v u="$u1" '$2 >= u' "$work/jobs.txt" | wc -l)
reruns=$(grep -o 'reruns=[0-9]*' "$work/jobs.txt" | awk -F= '{ s += $2 } END { print s + 0 }')
sed 's/^/  job /' "$work/jobs.txt"
{ [ "$jobs_failed" -eq 0 ] && [ "$jobs_wrong" -eq 0 ]; } || { echo "FAIL: $jobs_failed failed, $jobs_wrong wrong jobs" >&2; fail=1; }
[ "$reruns" -eq 0 ] || { echo "FAIL: $reruns stage reruns" >&2; fail=1; }
{ [ "$before" -ge 1 ] && [ "$during" -ge 1 ]; } || { echo "FAIL: no job started before, or ran during, the upgrade" >&2; fail=1; }
[ -z "$downgrade" ] || [ "$after" -ge 1 ] || { echo "FAIL: no job started after the upgrade" >&2; fail=1; }
if [ -n "$auth_passes" ]; then
  during_p=$(jobs_between "$p0" "$p1")
  during_p_a=$(awk -v a="$p0" -v b="$p1" -v c="$version_a" '$2 <= b && $3 >= a && $4 == c' "$work/jobs.txt" | wc -l)
  during_e=$(jobs_between "$e0" "$e1")
  { [ "$during_p_a" -ge 1 ] && [ "$during_p" -gt "$during_p_a" ]; } \
    || { echo "FAIL: jobs of both clients did not run during the permissive pass" >&2; fail=1; }
  [ "$during_e" -ge 1 ] || { echo "FAIL: no job ran during the enforcing pass" >&2; fail=1; }
fi

echo "rolling upgrade $version_a -> $version_b: nodes upgraded 6 (3 masters, 3 workers), took $((u1 - u0)) s" \
  "($(( (u1 - u0) / 6 )) s per node); jobs started before it $before, ran during it $during, started after it $after"
if [ -n "$downgrade" ]; then
  echo "rolling downgrade $version_b -> $version_a: 6 nodes, took $((d1 - d0)) s ($(( (d1 - d0) / 6 )) s per node);" \
    "jobs during it $(jobs_between "$d0" "$d1")"
fi
if [ -n "$auth_passes" ]; then
  echo "authentication permissive (every server ${downgrade:+upgraded from $version_a and }restarted): took" \
    "$((p1 - p0)) s; jobs during it $during_p" \
    "($during_p_a of $version_a's client); clients admitted without an identity $admitted"
  echo "authentication enforced (every server restarted): took $((e1 - e0)) s; jobs during it $during_e" \
    "(all of $version_b's client, authenticating)"
  [ -z "$downgrade" ] || echo "$version_a's client on the enforcing cluster: failed in $((r1 - r0)) s: ${refused:-?}"
fi
echo "jobs: $jobs_total run (clients alternating $version_a and $version_b" \
  "${auth_passes:+, then $version_b authenticating}), ok $jobs_ok, failed $jobs_failed, wrong $jobs_wrong, stage reruns $reruns"
[ "$fail" -eq 0 ] || exit 1
ok=1
echo "check-ansible: OK"
