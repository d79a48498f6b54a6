#!/usr/bin/env bash
# Regenerates docs/configuration.md from the ConfigEntry declarations.
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -pl common -DskipTests compile   # no install: other checkouts may share ~/.m2
cp=$(mvn -B -q -pl common dependency:build-classpath -Dmdep.outputFile=/dev/stdout)
java -cp "common/target/classes:$cp" io.estuary.common.config.ConfigDocGenerator docs/configuration.md
java -cp "common/target/classes:$cp" io.estuary.common.release.FormatsDoc docs/upgrading.md
