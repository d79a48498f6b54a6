#!/usr/bin/env bash
# Runs a class of the bench module in a Spark driver JVM whose class path is Spark plus dist/'s shaded Estuary jar,
# the way a user's application sees Estuary (the jar of $ESTUARY_HOME when set, as the bench scripts do). Usage:
# build/spark-driver.sh [JVM options, such as -Dspark.*=... that SparkConf reads] main-class [args]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cpfile=bench/target/spark-classpath.txt
if [ ! -s "$cpfile" ] || [ bench/pom.xml -nt "$cpfile" ] || [ "$0" -nt "$cpfile" ] || grep -q estuary "$cpfile"; then
  # Estuary's own modules are left out: the driver must see Estuary only through the shaded jar (the bench module
  # depends on them, provided, for bench/read-small.sh alone).
  mvn -B -q -pl bench dependency:build-classpath -Dmdep.outputFile="$root/$cpfile" -DexcludeGroupIds=io.estuary \
    >/dev/null
fi
opens=$(sed -n 's:.*<spark.jvm.opens>\(.*\)</spark.jvm.opens>.*:\1:p' pom.xml)
# shellcheck disable=SC2086
exec java -Xmx${DRIVER_MEMORY:-6g} $opens -cp "bench/target/classes:$(cat "$cpfile"):$(ls "${ESTUARY_HOME:-dist}"/spark/estuary-client-spark-3-shaded_2.12-*.jar)" "$@"
