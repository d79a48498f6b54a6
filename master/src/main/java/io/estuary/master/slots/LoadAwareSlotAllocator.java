package io.estuary.master.slots;

import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.DiskStatus;
import io.estuary.common.protocol.LocationRole;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * Places more partitions on disks that can take them: each healthy disk gets a weight from its latency (flush and
 * fetch), its active slots and its free space, and partitions are dealt out in proportion to the weights by
 * stride scheduling (smooth, deterministic, O(partitions × log disks)).
 *
 * <p>A disk slower than the threshold gets no new slots, but never more than {@code maxSlowFraction} of all disks
 * are excluded this way (the slowest first): when the whole cluster is slow, it keeps writing everywhere.
 */
public final class LoadAwareSlotAllocator implements SlotAllocator {
    private final long slowMicros;
    private final double maxSlowFraction;
    private final int maxWorkersPerApp;
    private final ReplicaPlacer replicas;
    private int rotation;

    public LoadAwareSlotAllocator(
            long slowDiskThresholdMs, double maxSlowFraction, int maxWorkersPerApp, Map<String, String> rackOfHost) {
        this.slowMicros = slowDiskThresholdMs * 1000;
        this.maxSlowFraction = maxSlowFraction;
        this.maxWorkersPerApp = maxWorkersPerApp;
        this.replicas = new ReplicaPlacer(rackOfHost);
    }

    private static long latencyMicros(DiskInfo d) {
        return Math.max(d.getAvgFlushMicros(), d.getAvgFetchMicros());
    }

    /** Disks (worker:mountPoint) excluded as slow: over the threshold, slowest first, at most the allowed fraction. */
    Set<String> slowDisks(List<WorkerInfo> workers) {
        List<String> slow = new ArrayList<>();
        List<Long> latency = new ArrayList<>();
        int total = 0;
        for (WorkerInfo w : workers) {
            for (DiskInfo d : w.getDisksList()) {
                total++;
                if (latencyMicros(d) > slowMicros) {
                    slow.add(key(w, d));
                    latency.add(latencyMicros(d));
                }
            }
        }
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < slow.size(); i++) order.add(i);
        order.sort(Comparator.comparing((Integer i) -> -latency.get(i)).thenComparing(slow::get));
        int cap = (int) Math.floor(total * maxSlowFraction);
        Set<String> out = new HashSet<>();
        for (int i = 0; i < Math.min(cap, order.size()); i++) out.add(slow.get(order.get(i)));
        return out;
    }

    private static String key(WorkerInfo w, DiskInfo d) {
        return w.getAddress().getHost() + ":" + w.getAddress().getRpcPort() + ":" + d.getMountPoint();
    }

    /** Higher for faster, emptier, roomier disks. */
    static double weight(DiskInfo d) {
        double latencyMs = latencyMicros(d) / 1000.0;
        double room = 0.5 + 0.5 * Math.min(1.0, d.getUsableBytes() / (double) (100L << 30));
        return room / (1 + latencyMs / 10) / (1 + d.getActiveSlots() / 256.0);
    }

    private static final class Slot {
        final WorkerInfo worker;
        final String disk;
        final double stride;
        final int order;
        double pass;

        Slot(WorkerInfo worker, String disk, double weight, int order) {
            this.worker = worker;
            this.disk = disk;
            this.stride = 1.0 / weight;
            this.order = order;
            this.pass = stride / 2; // start half a stride in, so equal disks alternate from the first partition
        }
    }

    @Override
    public synchronized List<PartitionLocation> allocate(SlotRequest req, List<WorkerInfo> workers) {
        Set<String> slow = slowDisks(workers);
        List<WorkerInfo> eligible = new ArrayList<>();
        for (WorkerInfo w : workers) {
            for (DiskInfo d : w.getDisksList()) {
                if (d.getStatus() == DiskStatus.DISK_HEALTHY && !slow.contains(key(w, d))) {
                    eligible.add(w);
                    break;
                }
            }
        }
        if (eligible.isEmpty()) {
            throw new StatusException(
                    StatusCode.FATAL,
                    "no slots for " + req + ": " + workers.size()
                            + " workers registered, none with a healthy disk fast enough");
        }
        List<WorkerInfo> chosen = WorkerSelection.forApplication(req, eligible, maxWorkersPerApp, rotation);
        int n = chosen.size();
        int start = Math.floorMod(rotation++, n);
        // Disk-major, worker-minor order from a rotating start: ties go to different workers first.
        int maxDisks = 0;
        for (WorkerInfo w : chosen) maxDisks = Math.max(maxDisks, w.getDisksCount());
        PriorityQueue<Slot> queue = new PriorityQueue<>(
                Comparator.comparingDouble((Slot s) -> s.pass).thenComparingInt(s -> s.order));
        int order = 0;
        for (int j = 0; j < maxDisks; j++) {
            for (int i = 0; i < n; i++) {
                WorkerInfo w = chosen.get((start + i) % n);
                if (j >= w.getDisksCount()) continue;
                DiskInfo d = w.getDisks(j);
                if (d.getStatus() != DiskStatus.DISK_HEALTHY || slow.contains(key(w, d))) continue;
                queue.add(new Slot(w, d.getMountPoint(), Math.max(weight(d), 1e-6), order++));
            }
        }
        List<PartitionLocation> out = new ArrayList<>(req.numPartitions);
        for (int p = 0; p < req.numPartitions; p++) {
            Slot s = queue.poll();
            out.add(PartitionLocation.newBuilder()
                    .setPartitionId(p)
                    .setEpoch(0)
                    .setWorker(s.worker.getAddress())
                    .setDisk(s.disk)
                    .setRole(LocationRole.PRIMARY)
                    .build());
            s.pass += s.stride;
            queue.add(s);
        }
        return req.replicate ? replicas.withReplicas(req, out, chosen) : out;
    }
}
