package io.estuary.master.slots;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.DiskStatus;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.util.EstuaryException;
import io.estuary.master.state.WorkerId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SlotAllocatorTest {
    static WorkerInfo worker(int i, long... latencyMicrosPerDisk) {
        WorkerInfo.Builder w = WorkerInfo.newBuilder()
                .setAddress(WorkerAddress.newBuilder()
                        .setHost("host" + i)
                        .setRpcPort(1)
                        .setPushPort(2)
                        .setFetchPort(3));
        for (int d = 0; d < latencyMicrosPerDisk.length; d++) {
            w.addDisks(DiskInfo.newBuilder()
                    .setMountPoint("/d" + d)
                    .setStatus(DiskStatus.DISK_HEALTHY)
                    .setUsableBytes(500L << 30)
                    .setAvgFlushMicros(latencyMicrosPerDisk[d]));
        }
        return w.build();
    }

    static List<WorkerInfo> workers(int n, int disks) {
        List<WorkerInfo> out = new ArrayList<>();
        for (int i = 0; i < n; i++) out.add(worker(i, new long[disks]));
        return out;
    }

    static SlotRequest req(int partitions) {
        return new SlotRequest("app", 0, partitions, false, Collections.emptySet());
    }

    static Map<String, Integer> perDisk(List<PartitionLocation> locs) {
        Map<String, Integer> m = new HashMap<>();
        for (PartitionLocation l : locs) m.merge(l.getWorker().getHost() + l.getDisk(), 1, Integer::sum);
        return m;
    }

    static LoadAwareSlotAllocator loadAware(int maxWorkers) {
        return new LoadAwareSlotAllocator(200, 0.3, maxWorkers, Collections.emptyMap());
    }

    @Test
    void evenLoadSpreadsEvenlyAndNeighboursLandOnDifferentWorkers() {
        for (SlotAllocator a : new SlotAllocator[] {loadAware(500), new RoundRobinSlotAllocator()}) {
            List<PartitionLocation> locs = a.allocate(req(1000), workers(10, 2));
            assertEquals(1000, locs.size());
            for (int p = 0; p < 1000; p++) assertEquals(p, locs.get(p).getPartitionId());
            Map<String, Integer> m = perDisk(locs);
            assertEquals(20, m.size());
            for (int c : m.values()) assertTrue(c >= 49 && c <= 51, a.getClass().getSimpleName() + ": " + m);
            for (int p = 1; p < 10; p++) {
                assertNotEquals(
                        locs.get(p - 1).getWorker(), locs.get(p).getWorker(), "partitions " + (p - 1) + ", " + p);
            }
        }
    }

    @Test
    void slowDisksGetNothingAndBusyOnesGetLess() {
        List<WorkerInfo> ws = workers(8, 1);
        ws.add(worker(8, 500_000)); // 500 ms: over the 200 ms threshold
        ws.add(worker(9, 50_000)); // 50 ms: slower, but under the threshold
        Map<String, Integer> m = perDisk(loadAware(500).allocate(req(1000), ws));
        assertNull(m.get("host8/d0"), "a disk over the threshold gets no slots: " + m);
        assertTrue(m.get("host9/d0") > 0 && m.get("host9/d0") < m.get("host0/d0"), m.toString());
        int total = 0;
        for (int c : m.values()) total += c;
        assertEquals(1000, total);
    }

    @Test
    void slowDiskExclusionIsCappedAtThirtyPercent() {
        List<WorkerInfo> ws = new ArrayList<>();
        for (int i = 0; i < 5; i++) ws.add(worker(i, 0));
        for (int i = 5; i < 10; i++) ws.add(worker(i, 300_000 + 100_000L * (i - 5))); // 300..700 ms, all slow
        LoadAwareSlotAllocator a = loadAware(500);
        Set<String> excluded = a.slowDisks(ws);
        assertEquals(3, excluded.size(), "30% of 10 disks at most: " + excluded);
        assertTrue(
                excluded.containsAll(java.util.Arrays.asList("host9:1:/d0", "host8:1:/d0", "host7:1:/d0")),
                "the slowest go first: " + excluded);
        Map<String, Integer> m = perDisk(a.allocate(req(500), ws));
        assertTrue(m.containsKey("host5/d0") && m.containsKey("host6/d0"), "slow but within the cap: " + m);
        assertFalse(m.containsKey("host9/d0"));
    }

    @Test
    void anApplicationStaysWithinMaxWorkers() {
        LoadAwareSlotAllocator a = loadAware(5);
        List<WorkerInfo> ws = workers(20, 2);
        List<PartitionLocation> first = a.allocate(new SlotRequest("app", 0, 200, false, Collections.emptySet()), ws);
        Set<String> used = new HashSet<>();
        for (PartitionLocation l : first) used.add(WorkerId.of(l.getWorker()));
        assertEquals(5, used.size());
        List<PartitionLocation> second = a.allocate(new SlotRequest("app", 1, 200, false, used), ws);
        for (PartitionLocation l : second)
            assertTrue(used.contains(WorkerId.of(l.getWorker())), "left the app's workers");
        // Another application starts elsewhere in the cluster.
        Set<String> other = new HashSet<>();
        for (PartitionLocation l : a.allocate(new SlotRequest("app2", 0, 200, false, Collections.emptySet()), ws)) {
            other.add(WorkerId.of(l.getWorker()));
        }
        assertEquals(5, other.size());
        assertNotEquals(used, other);
    }

    @Test
    void replicasGoToAnotherWorkerAndAnotherRack() {
        Map<String, String> racks = new HashMap<>();
        for (int i = 0; i < 6; i++) racks.put("host" + i, i < 3 ? "rackA" : "rackB");
        for (SlotAllocator a : new SlotAllocator[] {
            new LoadAwareSlotAllocator(200, 0.3, 500, racks), new RoundRobinSlotAllocator(500, racks)
        }) {
            List<PartitionLocation> locs =
                    a.allocate(new SlotRequest("app", 0, 300, true, Collections.emptySet()), workers(6, 2));
            for (PartitionLocation l : locs) {
                assertTrue(l.hasPeer());
                assertNotEquals(l.getWorker(), l.getPeer().getWorker());
                assertNotEquals(
                        racks.get(l.getWorker().getHost()),
                        racks.get(l.getPeer().getWorker().getHost()),
                        "partition " + l.getPartitionId() + " has both copies in one rack");
            }
        }
        // Without a topology (or with one rack), another worker is enough.
        for (PartitionLocation l : loadAware(500).allocate(new SlotRequest("a", 0, 50, true, null), workers(2, 1))) {
            assertNotEquals(l.getWorker(), l.getPeer().getWorker());
        }
        // One usable worker: no replica is possible, but the shuffle still gets its (single-copy) locations.
        for (SlotAllocator a : new SlotAllocator[] {loadAware(500), new RoundRobinSlotAllocator()}) {
            List<PartitionLocation> single = a.allocate(new SlotRequest("a", 1, 5, true, null), workers(1, 1));
            assertEquals(5, single.size());
            for (PartitionLocation l : single) assertFalse(l.hasPeer());
        }
    }

    @Test
    void noHealthyDiskIsAClearError() {
        WorkerInfo full = workers(1, 1).get(0).toBuilder()
                .setDisks(0, workers(1, 1).get(0).getDisks(0).toBuilder().setStatus(DiskStatus.DISK_FULL))
                .build();
        EstuaryException e = assertThrows(
                EstuaryException.class, () -> loadAware(500).allocate(req(3), Collections.singletonList(full)));
        assertTrue(e.getMessage().contains("none with a healthy disk"), e.getMessage());
    }
}
