#!/usr/bin/env bash
# Builds the distribution in dist/: sbin/, conf/, jars/ (servers) and spark/ (one shaded client jar per Spark line;
# README.md says which jar goes with which Spark).
# Usage: build/make-dist.sh [extra maven args]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
version=$(sed -n 's:.*<version>\(.*\)</version>.*:\1:p' pom.xml | head -1)

mvn -B -q -DskipTests "$@" install
rm -rf dist
mkdir -p dist/jars dist/spark dist/conf dist/sbin
for m in master worker; do
  mvn -B -q -pl "$m" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$root/dist/jars"
  cp "$m/target/estuary-$m-$version.jar" dist/jars/
done
cp sbin/*.sh dist/sbin/
cp conf/*.template dist/conf/
for jar in client-spark/*-shaded*/target/estuary-client-spark-*-shaded_*-"$version".jar; do
  cp "$jar" dist/spark/
done
echo "$version" > dist/VERSION
echo "dist/ ready: $(ls dist/jars | wc -l) server jars; spark/: $(ls dist/spark | tr '\n' ' ')"
