#!/usr/bin/env bash
# Runs every test: unit tests, then real masters, workers and Spark jobs on loopback.
# ESTUARY_TEST_PHASE (default verify): CI sets install, so that build/make-dist.sh can package this build without
# building it again (ESTUARY_DIST_PREBUILT).
set -euo pipefail
cd "$(dirname "$0")/.."
exec mvn -B "${ESTUARY_TEST_PHASE:-verify}" "$@"
