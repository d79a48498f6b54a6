#!/usr/bin/env bash
# Memory oversubscription run (not a test, not in CI): the end-to-end back-pressure test at a larger scale.
#
# Usage: bench/pressure.sh [records_per_map=1000000] [partitions=4096]
#
# Two workers, each in its own JVM with 384 MiB of heap, direct memory capped at 160 MiB and
# estuary.worker.memory.maxBuffered=64m, take a replicated Spark shuffle (local[4], 8 maps of generated 250-byte
# records; 1,000,000 per map is 2 GB, 4 GB with replicas) over `partitions` partitions: their flush buffers would
# want partitions x 2 x 1 MiB / 2 workers (4 GiB at 4096), 64x what they may hold. Prints the command it ran and,
# per worker, the peak resident memory (VmHWM), the peak of the memory the worker itself tracked (MemoryTracker,
# from its /api/status) against its 64 MiB limit, the job time and how often it paused; fails if any task failed, a
# worker ran out of memory or its tracked peak passed the limit by more than the test's documented slack, or the
# output differs from the input (count and order-independent checksum). Saved to
# bench/results/pressure-<timestamp>.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
records=${1:-1000000}
partitions=${2:-4096}
stamp=$(date +%Y%m%d-%H%M%S)
mkdir -p bench/results
out=bench/results/pressure-$stamp.txt
cmd=(mvn -B -o -q verify -pl tests -am -Dtest=WorkerMemoryPressureTest -Dsurefire.failIfNoSpecifiedTests=false
  -DskipShade=true)
echo "command: bench/pressure.sh $records $partitions, that is: ESTUARY_PRESSURE_RECORDS_PER_MAP=$records" \
  "ESTUARY_PRESSURE_PARTITIONS=$partitions ${cmd[*]}" | tee "$out"
ESTUARY_PRESSURE_RECORDS_PER_MAP=$records ESTUARY_PRESSURE_PARTITIONS=$partitions "${cmd[@]}" > "$out.log" 2>&1 \
  || { tail -50 "$out.log"; echo "FAILED (log: $out.log)"; exit 1; }
grep -h PRESSURE tests/target/surefire-reports/io.estuary.tests.WorkerMemoryPressureTest-output.txt | tee -a "$out"
rm -f "$out.log"
