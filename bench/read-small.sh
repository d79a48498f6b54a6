#!/usr/bin/env bash
# Small-partition read benchmark: thousands of small partitions (KB each) read by many concurrent readers while a
# heavy load reads big partitions from the same disks, with the workers' small-partition cache on, then off. A
# master and two workers run inside the benchmark's JVM (io.estuary.bench.SmallReadBenchmark, engine-neutral
# client API, no Spark). Prints p50/p99/max/mean per small-partition read for each setting and the off/on ratios;
# fails if any partition reads back different records than were written (count and checksum).
#
# Usage: bench/read-small.sh [key=value ...]
#   partitions=4000 kb=4 readers=32 bigMb=256 bigReaders=2 readThreads=2 (per disk) cache=both|on|off
#   busyMs=5 busyDepth=8: tasks of busyMs kept queued on each disk's read threads, modelling a disk busy with
#   seeks (page-cached test files never make the disk queue the bottleneck by themselves); busyDepth=0: none
# Environment: READ_SMALL_HEAP (3g), READ_SMALL_DIRECT (2g: direct memory of the JVM, which the workers share).
# Builds the modules (a reactor build: installs nothing) when their classes are missing; run
# `mvn -o -q verify -pl bench -am -DskipTests` first to measure code changed since.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ ! -f bench/target/classes/io/estuary/bench/SmallReadBenchmark.class ]; then
  mvn -B -o -q verify -pl bench -am -DskipTests
fi
cpfile=bench/target/read-small.classpath
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
exec java -Xmx"${READ_SMALL_HEAP:-3g}" -XX:MaxDirectMemorySize="${READ_SMALL_DIRECT:-2g}" \
  -Dlog4j2.level=warn -cp "${classes#:}:$(cat "$cpfile")" io.estuary.bench.SmallReadBenchmark "$@"
