#!/usr/bin/env bash
# TeraSort-like MapReduce job on native shuffle, then on Estuary, in one run (LocalJobRunner; not a test, not in CI).
#
# Usage: bench/mr-terasort.sh [gigabytes=1] [reducers=8] [master-endpoints]
#
# Generates `gigabytes` of 92-byte records with random 10-letter keys, sorts them with TotalOrderPartitioner on
# MapReduce's own shuffle, then on Estuary (a master and two workers started in the same JVM on loopback unless
# master endpoints are given), checks the outputs match (count, order-independent checksum, global order) and
# prints both times and the ratio; the output is saved to bench/results/mr-terasort-<timestamp>.txt, the JVM's log
# to the .log file next to it.
# Environment: BENCH_HEAP (java -Xmx, default 3g).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
gb=${1:-1}
reducers=${2:-8}
cp_file=$(mktemp)
# The last module of the reactor (client-mr) writes the class path file last.
flock /tmp/mvn.lock mvn -B -o -q package -DskipTests -pl client-mr -am dependency:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile="$cp_file" >/dev/null
cp="client-mr/target/classes:client-mr/target/test-classes:$(cat "$cp_file")"
rm -f "$cp_file"
mkdir -p bench/results
out="bench/results/mr-terasort-$(date +%Y%m%d-%H%M%S).txt"
# The JVM's log goes next to the result, so a run that stops early says why.
log="${out%.txt}.log"
if ! java -Xmx"${BENCH_HEAP:-3g}" --add-opens=java.base/java.lang=ALL-UNNAMED -cp "$cp" io.estuary.mr.TeraSortBench \
  "$gb" "$reducers" ${3:+"$3"} 2>"$log" | tee "$out"; then
  echo "the benchmark failed; its log: $log" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
