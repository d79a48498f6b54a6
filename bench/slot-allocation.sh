#!/usr/bin/env bash
# Slot allocation cost: 100,000 partitions over 1,000 simulated workers, for each placement policy.
# Usage: bench/slot-allocation.sh [workers] [partitions]
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -pl master -am -DskipTests install >/dev/null
cp=$(mvn -B -q -pl master dependency:build-classpath -Dmdep.outputFile=/dev/stdout -Dmdep.includeScope=test)
java -Xmx2g -cp "master/target/test-classes:master/target/classes:$cp" \
  io.estuary.master.slots.SlotAllocationBenchmark "${1:-1000}" "${2:-100000}"
