#!/usr/bin/env bash
# Builds the distribution in dist/: sbin/, conf/, jars/ (servers), spark/ and mr/ (the shaded client jars).
# Usage: build/make-dist.sh [extra maven args]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
version=$(sed -n 's:.*<version>\(.*\)</version>.*:\1:p' pom.xml | head -1)
scala=2.12

mvn -B -q -DskipTests "$@" install
rm -rf dist
mkdir -p dist/jars dist/spark dist/mr dist/conf dist/sbin
for m in master worker; do
  mvn -B -q -pl "$m" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$root/dist/jars"
  cp "$m/target/estuary-$m-$version.jar" dist/jars/
done
cp sbin/*.sh dist/sbin/
cp conf/*.template dist/conf/
cp "client-spark/spark-3-shaded/target/estuary-client-spark-3-shaded_$scala-$version.jar" dist/spark/
cp "client-mr-shaded/target/estuary-client-mr-shaded-$version.jar" dist/mr/
echo "$version" > dist/VERSION
echo "dist/ ready: $(ls dist/jars | wc -l) server jars, spark/$(ls dist/spark), mr/$(ls dist/mr)"
