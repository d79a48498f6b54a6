#!/usr/bin/env bash
# Runs every test: unit tests, then real masters, workers and Spark jobs on loopback. When CHANGELOG.md names an
# earlier release, its distribution (built once and cached by build/previous-release.sh) is handed to
# PreviousReleaseTest, which fails without it.
# ESTUARY_TEST_PHASE (default verify): CI sets install, so that build/make-dist.sh can package this build without
# building it again (ESTUARY_DIST_PREBUILT).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=build/lib/releases.sh
. build/lib/releases.sh
args=()
if [ -n "$(previous_release_commit)" ]; then
  dist=$(build/previous-release.sh)
  args+=("-Destuary.previousRelease.dist=$dist")
fi
exec mvn -B "${ESTUARY_TEST_PHASE:-verify}" "${args[@]}" "$@"
