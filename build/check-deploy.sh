#!/usr/bin/env bash
# Checks the Helm chart (charts/estuary) for its default values and each values file under charts/estuary/ci/:
#   helm lint --strict; helm template; every rendered Kubernetes object validated against the Kubernetes 1.33
#   schemas in strict mode (kubernetes-validate); Prometheus Operator objects against their CRD fields
#   (build/check_manifests.py); and each rendered estuary-defaults.conf accepted by Estuary's own parser with
#   unknown keys refused (io.estuary.common.config.ConfigCheck).
# Installs what it needs when missing, into caches kept between runs: helm v3.22.0 into $(go env GOPATH)/bin (built
# from the Go module proxy: about 10 minutes the first time on this machine), kubernetes-validate 1.37.0 into a venv
# under ~/.cache/estuary. Output of the last run: target/check-deploy/.
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

# Estuary's config parser: the common module's classes (built by the test run before this; compiled if missing).
classes=common/target/classes
if [ ! -f "$classes/io/estuary/common/config/ConfigCheck.class" ]; then
  mvn -B -q -pl common -DskipTests compile
fi

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
  echo "   $(ls "$dir"/k8s | wc -l) objects valid for Kubernetes $K8S_VERSION"
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
# The configuration check must bite: a misspelt key given to the chart is refused.
bad=$out/misspelt-key
mkdir -p "$bad"
"$helm" template estuary "$chart" --set 'worker.config.estuary\.worker\.flush\.bufferSise=1m' >"$bad/rendered.yaml"
"$venv/bin/python" build/check_manifests.py "$bad/rendered.yaml" "$bad" >/dev/null
if java -cp "$classes" io.estuary.common.config.ConfigCheck --role worker "$bad"/conf/worker-*.conf >/dev/null 2>&1; then
  echo "FAIL misspelt-key: a rendered estuary.worker.flush.bufferSise was accepted"; failed=$((failed + 1))
else
  echo "== misspelt-key: refused as it should be"; checked=$((checked + 1))
fi

echo "check-deploy: $checked passed, $failed failed ($(($(date +%s) - start)) s)"
[ "$failed" = 0 ]
