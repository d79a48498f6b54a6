package io.estuary.client.lifecycle;

import io.estuary.common.protocol.LocationRole;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.common.util.IdRanges;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * New locations the driver chooses itself when no master answers (two of three masters down, an election that
 * takes long): on the workers that already hold the shuffle, minus those it must avoid, each partition on the next
 * worker in turn and its replica on the one after. A revive is never logged by the masters anyway (the driver owns
 * epochs), and every location is reserved on its workers before use, so a dead worker chosen here is weeded out as
 * with the master's choice; what the driver lacks is the master's view of load and of workers it has not used.
 * Stateless.
 */
final class DriverPlacement {
    private DriverPlacement() {}

    /** One location per partition id, in their order, at epoch 0 (the caller numbers epochs). */
    static List<PartitionLocation> place(
            List<Integer> partitionIds,
            Collection<PartitionLocation> known,
            Set<String> avoid,
            boolean replicate,
            int rotation) {
        Map<String, WorkerAddress> workers = new LinkedHashMap<>();
        Map<String, List<String>> disks = new LinkedHashMap<>();
        for (PartitionLocation l : known) {
            learn(l, avoid, workers, disks);
            if (l.hasPeer()) learn(l.getPeer(), avoid, workers, disks);
        }
        if (workers.isEmpty()) {
            throw new StatusException(
                    StatusCode.RETRY_LATER,
                    "no master answers, and every worker of this shuffle "
                            + "failed or must be avoided: no new location for partitions "
                            + IdRanges.describe(partitionIds));
        }
        List<String> ids = new ArrayList<>(workers.keySet());
        int n = ids.size();
        List<PartitionLocation> out = new ArrayList<>(partitionIds.size());
        for (int i = 0; i < partitionIds.size(); i++) {
            int p = partitionIds.get(i);
            int w = Math.floorMod(rotation + i, n);
            PartitionLocation.Builder loc = location(p, ids.get(w), workers, disks, i, LocationRole.PRIMARY);
            if (replicate && n > 1) {
                loc.setPeer(location(p, ids.get((w + 1) % n), workers, disks, i, LocationRole.REPLICA));
            }
            out.add(loc.build());
        }
        return out;
    }

    private static void learn(
            PartitionLocation l,
            Set<String> avoid,
            Map<String, WorkerAddress> workers,
            Map<String, List<String>> disks) {
        String id = WorkerCalls.id(l.getWorker());
        if (avoid.contains(id)) return;
        workers.putIfAbsent(id, l.getWorker());
        List<String> d = disks.computeIfAbsent(id, k -> new ArrayList<>());
        if (!d.contains(l.getDisk())) d.add(l.getDisk());
    }

    private static PartitionLocation.Builder location(
            int partition,
            String worker,
            Map<String, WorkerAddress> workers,
            Map<String, List<String>> disks,
            int i,
            LocationRole role) {
        List<String> d = disks.get(worker);
        return PartitionLocation.newBuilder()
                .setPartitionId(partition)
                .setEpoch(0)
                .setWorker(workers.get(worker))
                .setDisk(d.get(Math.floorMod(i, d.size())))
                .setRole(role);
    }
}
