#!/usr/bin/env bash
# Regenerates the list of admin views in docs/rest-api.md from their declarations (AdminViews, CliViews); the test
# that checks the doc writes it when asked. Reactor build: installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -o test -pl cli -am -Dtest='ViewsDocTest' -Dsurefire.failIfNoSpecifiedTests=false -Destuary.views.doc.write=true
echo "wrote the views of docs/rest-api.md"
