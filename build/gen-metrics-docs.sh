#!/usr/bin/env bash
# Regenerates docs/metrics.md from the metric registries of a running master and worker (the test that checks the
# doc writes it when asked). Reactor build: installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -o verify -pl worker -am -Dtest='WorkerObservabilityTest#metricsDocMatchesTheRegistries' \
  -Dsurefire.failIfNoSpecifiedTests=false -Destuary.metrics.doc.write=true
echo "wrote docs/metrics.md"
