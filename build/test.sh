#!/usr/bin/env bash
# Runs every test: unit tests, then real masters, workers and Spark jobs on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
exec mvn -B verify "$@"
