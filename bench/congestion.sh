#!/usr/bin/env bash
# Congestion-control timing: how much a calm application's push time grows while another floods the same worker
# (io.estuary.bench.CongestionBenchmark; a master and one worker in the benchmark's JVM). Prints the calm push time
# alone and during the flood and their ratio. The client's CongestionTest checks the behaviour, never the timing.
#
# Usage: bench/congestion.sh [JVM options: -Dbench.enforce=false, -Dbench.floodIgnoresCongestion=true]. Builds the modules (a reactor build: installs nothing) when their classes are missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ ! -f bench/target/classes/io/estuary/bench/CongestionBenchmark.class ]; then
  mvn -B -o -q verify -pl bench -am -DskipTests
fi
cpfile=bench/target/congestion.classpath
if [ ! -s "$cpfile" ] || [ pom.xml -nt "$cpfile" ] || [ bench/pom.xml -nt "$cpfile" ]; then
  rm -f "$cpfile.tmp"
  mvn -B -o -q -pl master,worker,client -am compile dependency:build-classpath -Dmdep.includeScope=runtime \
    -Dmdep.outputFile="$root/$cpfile.tmp" -Dmdep.appendOutput=true
  # Third-party jars only (the modules' own classes come from their target/ directories), each once.
  tr ':' '\n' < "$cpfile.tmp" | grep -v -e '/estuary-' -e '/target/' -e '/junit' -e '/opentest4j' -e '/apiguardian' | sort -u \
    | paste -sd: > "$cpfile"
  rm -f "$cpfile.tmp"
fi
classes=""
for m in common network server-common master worker client bench; do classes="$classes:$m/target/classes"; done
exec java -Xmx2g -Dlog4j2.level=warn "$@" -cp "${classes#:}:$(cat "$cpfile")" io.estuary.bench.CongestionBenchmark
