#!/usr/bin/env bash
# Runs every test: unit tests, then real masters, workers and Spark jobs on loopback. When CHANGELOG.md names an
# earlier release, its distribution (built once and cached by build/previous-release.sh) is handed to
# PreviousReleaseTest, which fails without it.
# ESTUARY_TEST_PHASE (default verify): CI sets install, so that build/make-dist.sh can package this build without
# building it again (ESTUARY_DIST_PREBUILT).
# ESTUARY_BUILD_THREADS (default 2): modules built and tested at once. Much of a test waits (servers starting,
# failures being detected), so two modules side by side finish well before one after the other, even on 2 cores;
# every test picks free ports and directories of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=build/lib/releases.sh
. build/lib/releases.sh
args=()
if [ -n "$(previous_release_commit)" ]; then
  dist=$(build/previous-release.sh)
  args+=("-Destuary.previousRelease.dist=$dist")
fi
exec mvn -B -T "${ESTUARY_BUILD_THREADS:-2}" "${ESTUARY_TEST_PHASE:-verify}" "${args[@]}" "$@"
