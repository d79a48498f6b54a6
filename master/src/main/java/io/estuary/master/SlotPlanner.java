package io.estuary.master;

import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.master.slots.SlotAllocator;
import io.estuary.master.slots.SlotRequest;
import io.estuary.master.state.WorkerId;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Placement that never hands out a bad worker. A worker is usable when it is registered, ACTIVE and not excluded by
 * the asking driver; everything else (lost, excluded by an operator or by failure reports, decommissioning) gets no
 * location, whether new, revived or kept from an earlier placement. Holds no state of its own; as thread-safe as its
 * {@link SlotAllocator}, which the leader's request threads share.
 */
final class SlotPlanner {
    private final SlotAllocator allocator;

    SlotPlanner(SlotAllocator allocator) {
        this.allocator = allocator;
    }

    /**
     * The workers a driver excluded. Drivers may name a worker by its {@link WorkerId} or by host:rpcPort (what the
     * driver's own error messages carry); both are accepted so either side can change without the other.
     */
    static Predicate<WorkerAddress> excludedBy(Collection<String> names) {
        if (names.isEmpty()) return a -> false;
        Set<String> set = new HashSet<>(names);
        return a -> set.contains(WorkerId.of(a)) || set.contains(a.getHost() + ":" + a.getRpcPort());
    }

    /** The workers of {@code view} (registered and ACTIVE) the driver did not exclude. */
    static List<WorkerInfo> usable(List<WorkerInfo> view, Predicate<WorkerAddress> excluded) {
        List<WorkerInfo> out = new ArrayList<>(view.size());
        for (WorkerInfo w : view) if (!excluded.test(w.getAddress())) out.add(w);
        return out;
    }

    /** Whether any copy of any location is on a worker the predicate names. */
    static boolean touches(List<PartitionLocation> locations, Predicate<WorkerAddress> excluded) {
        for (PartitionLocation l : locations) {
            if (excluded.test(l.getWorker())
                    || (l.hasPeer() && excluded.test(l.getPeer().getWorker()))) return true;
        }
        return false;
    }

    /**
     * A lease pattern's length: at least 16, and a whole number of the placement's period (primaries turn over the n
     * workers, replicas over the n - 1 others), so that dealing partitions round it keeps every shuffle as balanced
     * as the master's own placement; for very large clusters, a whole number of rounds over the workers.
     */
    static int leaseSize(int workers, boolean replicate) {
        int n = Math.max(1, workers);
        long period = replicate && n > 1 ? (long) n * (n - 1) : n;
        if (period > 1024) period = n;
        return (int) (period * Math.max(1, (16 + period - 1) / period));
    }

    /** A whole new shuffle: partitions 0..n-1 at epoch 0. */
    List<PartitionLocation> placeAll(
            String app,
            int shuffle,
            int partitions,
            boolean replicate,
            Set<String> appWorkers,
            List<WorkerInfo> usable) {
        SlotRequest req = new SlotRequest(app, shuffle, partitions, replicate, appWorkers);
        requireSome(req, usable);
        return allocator.allocate(req, usable);
    }

    /** One location per partition id, in their order, at {@code epoch}, chosen by the allocator like a shuffle. */
    List<PartitionLocation> place(
            String app,
            int shuffle,
            List<Integer> partitionIds,
            int epoch,
            boolean replicate,
            Set<String> appWorkers,
            List<WorkerInfo> usable) {
        SlotRequest req = new SlotRequest(app, shuffle, partitionIds.size(), replicate, appWorkers);
        requireSome(req, usable);
        List<PartitionLocation> raw = allocator.allocate(req, usable);
        List<PartitionLocation> out = new ArrayList<>(raw.size());
        for (int i = 0; i < raw.size(); i++) out.add(renumber(raw.get(i), partitionIds.get(i), epoch));
        return out;
    }

    /**
     * {@code existing} with every partition that has a copy outside {@code usable} placed anew (at its old epoch),
     * the others kept; {@code existing} itself when nothing had to move.
     */
    List<PartitionLocation> repair(
            String app,
            int shuffle,
            List<PartitionLocation> existing,
            boolean replicate,
            Set<String> appWorkers,
            List<WorkerInfo> usable) {
        Set<String> ok = ids(usable);
        List<Integer> bad = new ArrayList<>();
        for (int i = 0; i < existing.size(); i++) if (!onUsable(existing.get(i), ok)) bad.add(i);
        if (bad.isEmpty()) return existing;
        List<Integer> partitionIds = new ArrayList<>(bad.size());
        boolean hadPeers = false;
        for (int i : bad) {
            partitionIds.add(existing.get(i).getPartitionId());
            hadPeers |= existing.get(i).hasPeer();
        }
        List<PartitionLocation> fresh = place(app, shuffle, partitionIds, 0, replicate || hadPeers, appWorkers, usable);
        List<PartitionLocation> out = new ArrayList<>(existing);
        for (int j = 0; j < bad.size(); j++) {
            PartitionLocation old = existing.get(bad.get(j));
            out.set(bad.get(j), renumber(fresh.get(j), old.getPartitionId(), old.getEpoch()));
        }
        return out;
    }

    private static void requireSome(SlotRequest req, List<WorkerInfo> usable) {
        if (usable.isEmpty()) {
            throw new StatusException(
                    StatusCode.FATAL,
                    "no slots for " + req + ": no registered, active worker is left "
                            + "once lost, excluded and decommissioning workers (and those the driver excluded) are left out");
        }
    }

    private static PartitionLocation renumber(PartitionLocation l, int partitionId, int epoch) {
        PartitionLocation.Builder b = l.toBuilder().setPartitionId(partitionId).setEpoch(epoch);
        if (l.hasPeer())
            b.setPeer(l.getPeer().toBuilder().setPartitionId(partitionId).setEpoch(epoch));
        return b.build();
    }

    private static boolean onUsable(PartitionLocation l, Set<String> ok) {
        return ok.contains(WorkerId.of(l.getWorker()))
                && (!l.hasPeer() || ok.contains(WorkerId.of(l.getPeer().getWorker())));
    }

    private static Set<String> ids(List<WorkerInfo> workers) {
        Set<String> out = new HashSet<>();
        for (WorkerInfo w : workers) out.add(WorkerId.of(w.getAddress()));
        return out;
    }
}
