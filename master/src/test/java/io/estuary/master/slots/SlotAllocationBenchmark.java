package io.estuary.master.slots;

import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerInfo;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * Allocation cost: 100,000 partitions over 1,000 simulated workers (4 disks each, random latency, load and free
 * space). Run by bench/slot-allocation.sh; prints milliseconds per allocation for each policy.
 */
public final class SlotAllocationBenchmark {
    private SlotAllocationBenchmark() {}

    public static void main(String[] args) {
        int workers = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int partitions = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
        Random r = new Random(7);
        List<WorkerInfo> ws = new ArrayList<>();
        for (int i = 0; i < workers; i++) {
            long[] lat = new long[4];
            for (int d = 0; d < 4; d++) lat[d] = r.nextInt(100) < 5 ? 300_000 + r.nextInt(500_000) : r.nextInt(20_000);
            WorkerInfo w = SlotAllocatorTest.worker(i, lat);
            WorkerInfo.Builder b = w.toBuilder();
            for (int d = 0; d < 4; d++) {
                b.setDisks(
                        d,
                        w.getDisks(d).toBuilder()
                                .setActiveSlots(r.nextInt(2000))
                                .setUsableBytes((long) r.nextInt(2000) << 30));
            }
            ws.add(b.build());
        }
        SlotAllocator[] policies = {
            new LoadAwareSlotAllocator(200, 0.3, 500, Collections.emptyMap()),
            new LoadAwareSlotAllocator(200, 0.3, 100_000, Collections.emptyMap()),
            new RoundRobinSlotAllocator()
        };
        String[] names = {"loadaware (maxWorkers 500)", "loadaware (all 1000 workers)", "roundrobin"};
        for (int k = 0; k < policies.length; k++) {
            for (int i = 0; i < 5; i++) policies[k].allocate(new SlotRequest("warm", i, partitions, false, null), ws);
            int runs = 10;
            long t0 = System.nanoTime();
            List<PartitionLocation> last = null;
            for (int i = 0; i < runs; i++)
                last = policies[k].allocate(new SlotRequest("app" + i, i, partitions, false, null), ws);
            double ms = (System.nanoTime() - t0) / 1e6 / runs;
            long t1 = System.nanoTime();
            for (int i = 0; i < runs; i++)
                policies[k].allocate(new SlotRequest("rep" + i, i, partitions, true, null), ws);
            double msReplicated = (System.nanoTime() - t1) / 1e6 / runs;
            System.out.printf(
                    "%-30s %,d partitions over %,d workers: %7.1f ms per shuffle, %7.1f ms with replicas"
                            + " (%d locations)%n",
                    names[k], partitions, workers, ms, msReplicated, last.size());
        }
    }
}
