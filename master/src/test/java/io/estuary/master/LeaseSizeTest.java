package io.estuary.master;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.DiskStatus;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.master.slots.RoundRobinSlotAllocator;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A slot lease's pattern length ({@link SlotPlanner#leaseSize}) is a whole number of the round-robin placement's
 * period, so shuffles dealt round it one after another (as the driver's lease does) stay as balanced as the master's
 * own placement: with three workers and replicas, each shuffle of six partitions puts four copies on every worker,
 * whichever part of the pattern it starts at.
 */
class LeaseSizeTest {
    @Test
    void sizesAreWholePeriodsOfAtLeastSixteen() {
        assertEquals(16, SlotPlanner.leaseSize(1, true));
        assertEquals(16, SlotPlanner.leaseSize(2, true));
        assertEquals(18, SlotPlanner.leaseSize(3, true)); // period 3 x 2
        assertEquals(18, SlotPlanner.leaseSize(3, false)); // period 3
        assertEquals(90, SlotPlanner.leaseSize(10, true));
        assertEquals(40, SlotPlanner.leaseSize(40, true)); // 40 x 39 is too long: rounds over the workers
        assertEquals(16, SlotPlanner.leaseSize(0, true));
    }

    @Test
    void shufflesDealtRoundAPatternStayBalanced() {
        List<WorkerInfo> workers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            workers.add(WorkerInfo.newBuilder()
                    .setAddress(WorkerAddress.newBuilder().setHost("host" + i).setRpcPort(1))
                    .addDisks(DiskInfo.newBuilder().setMountPoint("/d").setStatus(DiskStatus.DISK_HEALTHY))
                    .build());
        }
        List<PartitionLocation> pattern = new SlotPlanner(new RoundRobinSlotAllocator())
                .placeAll("app", 0, SlotPlanner.leaseSize(3, true), true, Collections.emptySet(), workers);
        int turn = 0;
        for (int shuffle = 0; shuffle < 20; shuffle++) {
            Map<String, Integer> copies = new HashMap<>();
            for (int p = 0; p < 6; p++) {
                PartitionLocation l = pattern.get(turn++ % pattern.size());
                copies.merge(l.getWorker().getHost(), 1, Integer::sum);
                copies.merge(l.getPeer().getWorker().getHost(), 1, Integer::sum);
            }
            for (WorkerInfo w : workers) {
                assertEquals(4, copies.get(w.getAddress().getHost()), "shuffle " + shuffle + ": " + copies);
            }
        }
    }
}
