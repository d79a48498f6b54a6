#!/usr/bin/env bash
# Builds the distribution in dist/: bin/ (the CLI), sbin/, conf/, jars/ (servers) and spark/ (the shaded client jar).
# Usage: build/make-dist.sh [extra maven args]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
version=$(sed -n 's:.*<version>\(.*\)</version>.*:\1:p' pom.xml | head -1)
scala=2.12

mvn -B -q -DskipTests "$@" install
rm -rf dist
mkdir -p dist/jars dist/spark dist/conf dist/sbin dist/bin
for m in master worker; do
  mvn -B -q -pl "$m" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$root/dist/jars"
  cp "$m/target/estuary-$m-$version.jar" dist/jars/
done
cp sbin/*.sh dist/sbin/
cp bin/estuary dist/bin/   # the CLI; runs on the server jars in jars/
cp conf/*.template dist/conf/
cp "client-spark/spark-3-shaded/target/estuary-client-spark-3-shaded_$scala-$version.jar" dist/spark/
echo "$version" > dist/VERSION
echo "dist/ ready: $(ls dist/jars | wc -l) server jars, spark/$(ls dist/spark)"
