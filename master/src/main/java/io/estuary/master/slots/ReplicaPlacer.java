package io.estuary.master.slots;

import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.DiskStatus;
import io.estuary.common.protocol.LocationRole;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Gives each primary location a replica on another worker, and on another rack when the topology allows. With a
 * single usable worker there is nowhere to put a replica: the locations go out without peers rather than failing
 * the shuffle (a one-worker cluster keeps working; the driver warns that the data has one copy).
 */
final class ReplicaPlacer {
    private final Map<String, String> rackOfHost;

    ReplicaPlacer(Map<String, String> rackOfHost) {
        this.rackOfHost = rackOfHost;
    }

    private String rack(WorkerInfo w) {
        return rackOfHost.getOrDefault(w.getAddress().getHost(), "");
    }

    List<PartitionLocation> withReplicas(SlotRequest req, List<PartitionLocation> primaries, List<WorkerInfo> workers) {
        int n = workers.size();
        if (n < 2) return primaries;
        Map<WorkerAddress, Integer> index = new HashMap<>();
        List<List<String>> disks = new ArrayList<>(n);
        String[] racks = new String[n];
        for (int i = 0; i < n; i++) {
            WorkerInfo w = workers.get(i);
            index.put(w.getAddress(), i);
            List<String> healthy = new ArrayList<>();
            for (DiskInfo d : w.getDisksList())
                if (d.getStatus() == DiskStatus.DISK_HEALTHY) healthy.add(d.getMountPoint());
            disks.add(healthy);
            racks[i] = rack(w);
        }
        int[] diskCursor = new int[n];
        List<PartitionLocation> out = new ArrayList<>(primaries.size());
        for (PartitionLocation p : primaries) {
            int self = index.getOrDefault(p.getWorker(), 0);
            int peer = -1;
            int sameRackFallback = -1;
            // Visit every other worker once, starting at a per-partition offset so replicas spread out.
            int start = (self + 1 + Math.floorMod(p.getPartitionId(), n - 1)) % n;
            for (int i = 0; i < n && peer < 0; i++) {
                int c = (start + i) % n;
                if (c == self) continue;
                if (rackOfHost.isEmpty() || !racks[c].equals(racks[self])) peer = c;
                else if (sameRackFallback < 0) sameRackFallback = c;
            }
            if (peer < 0) peer = sameRackFallback;
            List<String> d = disks.get(peer);
            PartitionLocation replica = PartitionLocation.newBuilder()
                    .setPartitionId(p.getPartitionId())
                    .setEpoch(p.getEpoch())
                    .setWorker(workers.get(peer).getAddress())
                    .setDisk(d.get(diskCursor[peer]++ % d.size()))
                    .setRole(LocationRole.REPLICA)
                    .build();
            out.add(p.toBuilder().setPeer(replica).build());
        }
        return out;
    }
}
