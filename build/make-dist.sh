#!/usr/bin/env bash
# Builds the distribution in dist/: sbin/, conf/, jars/ (servers), spark/ and mr/ (the shaded client jars), bin/
# (the CLI), charts/ (the Helm chart), docs/, README.md, VERSION; then the release tarball of it all, dist/estuary-<version>-bin.tar.gz, whose top folder is
# estuary-<version>/.
# Usage: build/make-dist.sh [extra maven args]
# ESTUARY_DIST_PREBUILT=<this tree's root>: its modules were just built and installed (CI runs build/test.sh with
# ESTUARY_TEST_PHASE=install), so they are packaged as they are instead of being compiled and shaded a second time.
# A path, not a flag, so that another tree built under the same environment (an older release) still builds.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
version=$(sed -n 's:.*<version>\(.*\)</version>.*:\1:p' pom.xml | head -1)

if [ "${ESTUARY_DIST_PREBUILT:-}" = "$root" ]; then
  echo "make-dist: packaging the build already installed (ESTUARY_DIST_PREBUILT=$root)"
else
  mvn -B -q -DskipTests "$@" install
fi
rm -rf dist
mkdir -p dist/jars dist/spark dist/mr dist/conf dist/sbin
# jars/ holds the servers and the CLI (bin/estuary runs it from there).
for m in master worker cli; do
  mvn -B -q -pl "$m" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$root/dist/jars"
  cp "$m/target/estuary-$m-$version.jar" dist/jars/
done
cp sbin/*.sh dist/sbin/
cp conf/*.template dist/conf/
# One shaded client jar per Spark line (README.md says which goes with which Spark).
for jar in client-spark/*-shaded*/target/estuary-client-spark-*-shaded_*-"$version".jar; do
  cp "$jar" dist/spark/
done
cp "client-mr-shaded/target/estuary-client-mr-shaded-$version.jar" dist/mr/
cp -r bin dist/
mkdir -p dist/charts
cp -r charts/estuary dist/charts/
mkdir -p dist/docs
cp docs/*.md dist/docs/
# The Grafana dashboard lives in the chart (for its dashboard ConfigMap); a copy beside the docs for an import by hand.
mkdir -p dist/docs/grafana
cp charts/estuary/dashboards/*.json dist/docs/grafana/
cp README.md dist/
echo "$version" > dist/VERSION
jars=(dist/jars/*) spark=(dist/spark/*) mr=(dist/mr/*)
echo "dist/ ready: ${#jars[@]} server jars, spark/: $(basename -a "${spark[@]}" | tr '\n' ' '), mr/$(basename -a "${mr[@]}")"

# The tarball: a hard-linked copy of dist/ under its release name, so the archive unpacks into one folder.
release="estuary-$version"
stage="target/release"
rm -rf "$stage"
mkdir -p "$stage"
cp -al dist "$stage/$release"
tar -C "$stage" -czf "dist/$release-bin.tar.gz" "$release"
rm -rf "$stage"
echo "dist/$release-bin.tar.gz: $(du -h "dist/$release-bin.tar.gz" | cut -f1)"
