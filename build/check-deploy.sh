#!/usr/bin/env bash
# Checks the Helm chart (charts/estuary) for its default values and each values file under charts/estuary/ci/:
#   helm lint --strict; helm template; every rendered Kubernetes object validated against the Kubernetes 1.33
#   schemas in strict mode (kubernetes-validate); Prometheus Operator objects against their CRD fields
#   (build/check_manifests.py); and each rendered estuary-defaults.conf accepted by Estuary's own parser with
#   unknown keys refused (io.estuary.common.config.ConfigCheck); then that a misspelt value (the chart's
#   values.schema.json) and a misspelt estuary key are refused, and, when
#   dist/ has the release tarball, that three masters and two workers start from it with the configuration and
#   the pod environment the chart renders, elect a leader, register, and stop within their grace periods.
# Installs what it needs when missing, into caches kept between runs: helm v3.22.0 into $(go env GOPATH)/bin (built
# from the Go module proxy: about 10 minutes the first time on this machine), kubernetes-validate 1.37.0 into a venv
# under ~/.cache/estuary. Output of the last run: target/check-deploy/.
# Usage: build/check-deploy.sh [--tools-only]   (--tools-only: install what is missing, check nothing; .ci/run
# starts it first, at low priority, so that a cold machine builds helm while Maven runs)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
HELM_VERSION=v3.22.0
KV_VERSION=1.37.0
K8S_VERSION=1.33.0
out=$root/target/check-deploy
start=$(date +%s)

# helm: on the PATH or cached in Go's bin folder; built from source otherwise.
gobin=$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin
helm=$(command -v helm || echo "$gobin/helm")
# A helm built by go install reports only major.minor ("v3.22"), so that is what is compared.
if ! "$helm" version --short 2>/dev/null | grep -q "^${HELM_VERSION%.*}"; then
  command -v go >/dev/null || { echo "check-deploy: helm $HELM_VERSION is missing and there is no Go to build it" >&2; exit 1; }
  echo "check-deploy: building helm $HELM_VERSION (go install; minutes when the module cache is cold)"
  GOBIN=$gobin go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  helm=$gobin/helm
fi

# kubernetes-validate in its own venv (it brings PyYAML and jsonschema, which check_manifests.py uses too).
venv=${ESTUARY_DEPLOY_VENV:-$HOME/.cache/estuary/kv-venv-$KV_VERSION}
if ! "$venv/bin/kubernetes-validate" --version 2>/dev/null | grep -q "$KV_VERSION"; then
  echo "check-deploy: installing kubernetes-validate $KV_VERSION into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "kubernetes-validate==$KV_VERSION"
fi

[ "${1:-}" = --tools-only ] && { echo "check-deploy: helm and kubernetes-validate ready"; exit 0; }

# Estuary's config parser: the common module's classes (built by the test run before this; compiled if missing).
classes=common/target/classes
if [ ! -f "$classes/io/estuary/common/config/ConfigCheck.class" ]; then
  mvn -B -q -pl common -DskipTests compile
fi
# With its runtime dependencies (it logs a deprecated key's warning through SLF4J).
cpfile=$root/common/target/runtime-classpath.txt
if [ ! -s "$cpfile" ] || [ common/pom.xml -nt "$cpfile" ]; then
  mvn -B -q -pl common dependency:build-classpath -Dmdep.includeScope=runtime -Dmdep.outputFile="$cpfile" >/dev/null
fi
classes=$classes:$(cat "$cpfile")

rm -rf "$out"
mkdir -p "$out"
chart=charts/estuary
failed=0
checked=0
for values in default "$chart"/ci/*-values.yaml; do
  name=$(basename "$values" -values.yaml)
  args=()
  [ "$values" = default ] || args=(-f "$values")
  dir=$out/$name
  mkdir -p "$dir"
  echo "== $name"
  if ! "$helm" lint --strict "$chart" "${args[@]}" >"$dir/lint.txt" 2>&1; then
    cat "$dir/lint.txt"; echo "FAIL $name: helm lint --strict"; failed=$((failed + 1)); continue
  fi
  if ! "$helm" template estuary "$chart" --namespace shuffle "${args[@]}" >"$dir/rendered.yaml" 2>"$dir/template.err"; then
    cat "$dir/template.err"; echo "FAIL $name: helm template"; failed=$((failed + 1)); continue
  fi
  if ! "$venv/bin/python" build/check_manifests.py "$dir/rendered.yaml" "$dir"; then
    echo "FAIL $name: rendered objects"; failed=$((failed + 1)); continue
  fi
  # kubernetes-validate only warns on a kind it has no schema for: a misspelt apiVersion must fail here.
  if ! "$venv/bin/kubernetes-validate" --strict -k "$K8S_VERSION" "$dir"/k8s/*.yaml >"$dir/validate.txt" 2>&1 \
      || grep -q -E "Couldn't find schema|^(ERROR|WARN)" "$dir/validate.txt"; then
    cat "$dir/validate.txt"; echo "FAIL $name: kubernetes-validate --strict -k $K8S_VERSION"; failed=$((failed + 1)); continue
  fi
  echo "   $(find "$dir/k8s" -mindepth 1 -maxdepth 1 ! -name '.*' | wc -l) objects valid for Kubernetes $K8S_VERSION"
  conf_ok=1
  for conf in "$dir"/conf/*.conf; do
    role=$(basename "$conf" | cut -d- -f1)
    if ! java -cp "$classes" io.estuary.common.config.ConfigCheck --role "$role" "$conf" | sed 's/^/   /'; then
      conf_ok=0
    fi
  done
  if [ "$conf_ok" = 0 ]; then echo "FAIL $name: rendered estuary-defaults.conf"; failed=$((failed + 1)); continue; fi
  checked=$((checked + 1))
done
# The checks must bite: a misspelt value is refused by the chart's schema, a misspelt key by ConfigCheck.
if "$helm" lint --strict "$chart" --set worker.heapMib=4096 >"$out/misspelt-value.txt" 2>&1; then
  echo "FAIL misspelt-value: helm lint accepted worker.heapMib"; failed=$((failed + 1))
else
  echo "== misspelt-value: refused as it should be"; checked=$((checked + 1))
fi
bad=$out/misspelt-key
mkdir -p "$bad"
"$helm" template estuary "$chart" --set 'worker.config.estuary\.worker\.flush\.bufferSise=1m' >"$bad/rendered.yaml"
"$venv/bin/python" build/check_manifests.py "$bad/rendered.yaml" "$bad" >/dev/null
if java -cp "$classes" io.estuary.common.config.ConfigCheck --role worker "$bad"/conf/worker-*.conf >"$bad/check.txt" 2>&1; then
  echo "FAIL misspelt-key: a rendered estuary.worker.flush.bufferSise was accepted"; failed=$((failed + 1))
elif ! grep -q 'bufferSise' "$bad/check.txt"; then
  # Refused for another reason (the checker itself broken): not the refusal this check wants.
  cat "$bad/check.txt"; echo "FAIL misspelt-key: refused without naming the key"; failed=$((failed + 1))
else
  echo "== misspelt-key: refused as it should be"; checked=$((checked + 1))
fi

# Upgrade: `helm upgrade` from the previous release's chart (the commit CHANGELOG.md names) to this one, for each
# values file, rendered both ways and compared (build/check_helm_upgrade.py: nothing deleted, no immutable field
# changed, volumes kept, one pod at a time under PodDisruptionBudgets, time for the Raft leader to hand over, the
# cluster secret kept: same Secret, kept by helm, its value reused through lookup).
# shellcheck source=build/lib/releases.sh
. build/lib/releases.sh
previous=$(previous_release_commit)
if [ -z "$previous" ]; then
  echo "== upgrade: skipped (CHANGELOG.md names no earlier release)"
elif ! git cat-file -e "$previous^{commit}" 2>/dev/null; then
  echo "== upgrade: skipped (release commit $previous is not in this clone: shallow?)"
else
  up=$out/upgrade
  mkdir -p "$up/previous"
  git archive "$previous" charts/estuary | tar -x -C "$up/previous"
  old_chart=$up/previous/charts/estuary
  for values in default "$chart"/ci/*-values.yaml; do
    name=$(basename "$values" -values.yaml)
    args=()
    [ "$values" = default ] || args=(-f "$values")
    old_args=("${args[@]}")
    # A values file may use settings the previous chart lacks: render the old chart with its own copy then.
    if ! "$helm" template estuary "$old_chart" --namespace shuffle "${args[@]}" >"$up/$name-old.yaml" 2>"$up/$name-old.err"; then
      if [ -f "$up/previous/$values" ]; then old_args=(-f "$up/previous/$values"); else old_args=(); fi
      if [ "$values" != default ] && [ ${#old_args[@]} = 0 ]; then
        echo "== upgrade $name: skipped (no such values file in release ${previous:0:10})"; continue
      fi
      "$helm" template estuary "$old_chart" --namespace shuffle "${old_args[@]}" >"$up/$name-old.yaml"
    fi
    "$helm" template estuary "$chart" --namespace shuffle "${args[@]}" >"$up/$name-new.yaml"
    echo "== upgrade $name: chart of ${previous:0:10} -> this tree"
    if "$venv/bin/python" build/check_helm_upgrade.py "$up/$name-old.yaml" "$up/$name-new.yaml" "$chart"; then
      checked=$((checked + 1))
    else
      echo "FAIL upgrade $name: helm upgrade from ${previous:0:10} would not roll safely"; failed=$((failed + 1))
    fi
  done
  # The comparison must bite: an immutable field changed and a budget that breaks the quorum are refused.
  sed -e 's/podManagementPolicy: Parallel/podManagementPolicy: OrderedReady/' -e 's/maxUnavailable: 1/maxUnavailable: 2/' \
    "$up/ha3-pvc-new.yaml" >"$up/broken-new.yaml"
  if "$venv/bin/python" build/check_helm_upgrade.py "$up/ha3-pvc-old.yaml" "$up/broken-new.yaml" >"$up/broken.txt"; then
    echo "FAIL upgrade-broken: a changed podManagementPolicy and a quorum-breaking budget were accepted"; failed=$((failed + 1))
  else
    echo "== upgrade-broken: refused as it should be ($(grep -c BROKEN "$up/broken.txt") problems)"; checked=$((checked + 1))
  fi
  # And a cluster secret that would change in the middle of a rolling upgrade: another Secret, or one helm drops.
  "$helm" template estuary "$chart" --namespace shuffle --set auth.existingSecret=another >"$up/other-secret.yaml"
  grep -v 'helm.sh/resource-policy' "$up/default-new.yaml" >"$up/unkept-secret.yaml"
  for broken in other-secret unkept-secret; do
    if "$venv/bin/python" build/check_helm_upgrade.py "$up/default-new.yaml" "$up/$broken.yaml" "$chart" >"$up/$broken.txt"; then
      echo "FAIL upgrade-$broken: a changed cluster secret was accepted"; failed=$((failed + 1))
    else
      echo "== upgrade-$broken: refused as it should be"; checked=$((checked + 1))
    fi
  done
fi

# Start: the servers of the three-master values, from the release tarball, each as its container would run
# (the pod's environment and args with the image's entrypoint, the rendered configuration), pod names mapped to
# loopback addresses of their own. Needs build/make-dist.sh first; skipped without its tarball.
tarball=$(find dist -maxdepth 1 -name 'estuary-*-bin.tar.gz' 2>/dev/null | sort | head -1 || true)
if [ -z "$tarball" ]; then
  echo "== start: skipped (no dist/estuary-*-bin.tar.gz: build/make-dist.sh builds it)"
elif ! command -v curl >/dev/null; then
  echo "== start: skipped (no curl)"
else
  smoke=$out/start
  mkdir -p "$smoke/home"
  tar -C "$smoke/home" -xzf "$tarball"
  home=$(echo "$smoke"/home/estuary-*)
  # High ports, small heaps, and each server bound to its own address only.
  "$helm" template estuary "$chart" -f "$chart/ci/ha3-pvc-values.yaml" \
    --set master.ports.rpc=39097,master.ports.raft=39872,master.ports.http=39095 \
    --set worker.ports.rpc=39098,worker.ports.push=39099,worker.ports.fetch=39100,worker.ports.http=39096 \
    --set master.heapMiB=256,worker.heapMiB=256,worker.offHeapMiB=512 \
    --set 'config.estuary\.network\.bindWildcard=false,worker.config.estuary\.worker\.disk\.reserve=1m' \
    --set-string 'worker.config.estuary\.worker\.memory\.maxBuffered=256m' >"$smoke/rendered.yaml"
  "$venv/bin/python" build/check_manifests.py "$smoke/rendered.yaml" "$smoke" >/dev/null
  pids=()
  stop_started() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; }
  trap stop_started EXIT
  # The cluster secret, as the chart's Secret holds it (32 random bytes in base64).
  head -c 32 /dev/urandom | base64 | tr -d '\n' >"$smoke/cluster.secret"
  # start_pod KIND NAME POD ROLE: starts one server; its files under $smoke/pods/POD (its /data, /var/lib, conf,
  # and the private copy of the cluster secret its init container makes under /etc/estuary/auth).
  start_pod() {
    local pod_root=$smoke/pods/$3
    mkdir -p "$pod_root/conf" "$pod_root/logs" "$pod_root/var/lib/estuary/ratis" "$pod_root/etc/estuary/auth"
    install -m 0400 "$smoke/cluster.secret" "$pod_root/etc/estuary/auth/cluster.secret"
    "$venv/bin/python" build/pod_command.py --names "$smoke"/conf/"$4"-*.conf \
      | sed -e "s#/var/lib/estuary/#$pod_root/var/lib/estuary/#; s#/data/#$pod_root/data/#g" \
        -e "s#/etc/estuary/auth/#$pod_root/etc/estuary/auth/#" >"$pod_root/conf/estuary-defaults.conf"
    cp "$smoke"/conf/"$4"-*.log4j2.xml "$pod_root/conf/log4j2.xml"
    sed -n 's/^estuary.worker.storage.dirs *//p' "$pod_root/conf/estuary-defaults.conf" | tr , '\n' | xargs -r mkdir -p
    "$venv/bin/python" build/pod_command.py "$smoke/rendered.yaml" "$1" "$2" "$3" >"$pod_root/pod.sh"
    (
      # shellcheck source=/dev/null # pod.sh is written by build/pod_command.py above
      . "$pod_root/pod.sh"
      # shellcheck disable=SC2030 # the pod's environment: set in this subshell only, on purpose
      export ESTUARY_HOME=$home ESTUARY_CONF_DIR=$pod_root/conf ESTUARY_LOG_DIR=$pod_root/logs
      # shellcheck disable=SC2086,SC2153 # ARGS (set by pod.sh) is the pod's argument list, split into words
      exec "$home/sbin/estuary-daemon.sh" run $ARGS
    ) >"$pod_root/stdout.log" 2>&1 &
    pids+=($!)
  }
  # ready POD: its readiness probe answers 200.
  ready() {
    local host port_path
    # shellcheck source=/dev/null disable=SC2153 # pod.sh, written by the renderer above, sets ESTUARY_HOST
    host=$(. "$smoke/pods/$1/pod.sh" && echo "$ESTUARY_HOST")
    # shellcheck source=/dev/null disable=SC2154
    port_path=$(. "$smoke/pods/$1/pod.sh" && echo "$PROBE_readinessProbe")
    curl -sf -o /dev/null "http://$host:${port_path% *}${port_path#* }"
  }
  t0=$(date +%s)
  pods=(estuary-master-0 estuary-master-1 estuary-master-2 estuary-worker-0 estuary-worker-1)
  for i in 0 1 2; do start_pod StatefulSet estuary-master "estuary-master-$i" master; done
  for i in 0 1; do start_pod StatefulSet estuary-worker "estuary-worker-$i" worker; done
  # The cluster as the tarball's CLI sees it, asking every master's HTTP port (build/lib/cluster.sh).
  # shellcheck source=build/lib/cluster.sh
  . build/lib/cluster.sh
  ESTUARY_HOME=$home
  # shellcheck source=/dev/null # each pod's environment, written by the render step above
  CLUSTER_MASTER_HTTP=$(for i in 0 1 2; do (. "$smoke/pods/estuary-master-$i/pod.sh" && echo "$ESTUARY_HOST:39095"); done \
    | paste -sd,)
  ok=0
  deadline=$((SECONDS + 120))
  while [ "$SECONDS" -lt "$deadline" ]; do
    all=1
    for pod in "${pods[@]}"; do ready "$pod" || { all=0; break; }; done
    # Every master ready and in the Raft group, a leader elected, both workers registered and active.
    # The CLI with a master pod's configuration, as `kubectl exec` into it would run: it derives the admin token from
    # the cluster secret that configuration names.
    if [ "$all" = 1 ] && [ "$(ESTUARY_CONF_DIR=$smoke/pods/estuary-master-0/conf cluster_cli --json status 2>/dev/null | cluster_json "j['leader'] is not None \
        and all(m['role'] in ('leader', 'follower') for m in j['masters']) \
        and j['workersByState'].get('ACTIVE', 0) == 2")" = true ]; then
      ok=1; break
    fi
    sleep 1
  done
  t_ready=$(($(date +%s) - t0))
  # SIGTERM, as the kubelet sends it: each must be gone within its pod's grace period.
  stopped=1
  t1=$(date +%s)
  for i in 4 3 2 1 0; do
    kill "${pids[$i]}" 2>/dev/null || true
    # shellcheck source=/dev/null disable=SC2153 # pod.sh sets GRACE (the pod's termination grace period)
    grace=$(. "$smoke/pods/${pods[$i]}/pod.sh" && echo "$GRACE")
    for _ in $(seq 1 $((grace * 2))); do kill -0 "${pids[$i]}" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "${pids[$i]}" 2>/dev/null; then echo "   ${pods[$i]} still running after its grace period of $grace s"; stopped=0; fi
  done
  stop_started
  trap - EXIT
  if [ "$ok" = 1 ] && [ "$stopped" = 1 ]; then
    echo "== start: 3 masters (Raft) and 2 workers from $(basename "$tarball"), ready in $t_ready s, stopped in $(($(date +%s) - t1)) s"
    checked=$((checked + 1))
  else
    for pod in "${pods[@]}"; do echo "--- $pod"; tail -n 15 "$smoke/pods/$pod/stdout.log"; done
    echo "FAIL start: servers not ready and registered within 120 s, or not stopped in their grace period"
    failed=$((failed + 1))
  fi
fi

# Worded apart from test runners' "N passed, N failed" summaries: these are checks, not the project's tests.
if [ "$failed" = 0 ]; then
  echo "check-deploy: all $checked checks ok in $(($(date +%s) - start)) s"
else
  echo "check-deploy: $failed of $((checked + failed)) checks FAILED (details above; files in target/check-deploy)"
  exit 1
fi
