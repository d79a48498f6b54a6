package io.estuary.client.write;

import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.util.ShuffleKey;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Where each partition of one Estuary shuffle (one generation of an engine shuffle) is written now. One per
 * executor and generation, shared by every map task there: a revive by one task moves the partition for all of
 * them, so the others learn the new location without asking the driver. Thread-safe; a location only ever
 * advances to a newer epoch.
 */
public final class LocationTable {
    private final String appId;
    private final int shuffleId;
    private final String shuffleKey;
    private final AtomicReferenceArray<PartitionLocation> current;
    /** Per partition, the epoch a soft split was last requested for, so each epoch splits once. */
    private final AtomicReferenceArray<Integer> splitRequested;
    /** Per partition, the epoch whose failure was last logged, so a dead worker costs one line per partition. */
    private final AtomicReferenceArray<Integer> failureLogged;

    public LocationTable(String appId, int estuaryShuffleId, List<PartitionLocation> locations) {
        this.appId = appId;
        this.shuffleId = estuaryShuffleId;
        this.shuffleKey = ShuffleKey.of(appId, estuaryShuffleId);
        this.current = new AtomicReferenceArray<>(locations.toArray(new PartitionLocation[0]));
        this.splitRequested = new AtomicReferenceArray<>(locations.size());
        this.failureLogged = new AtomicReferenceArray<>(locations.size());
    }

    public String appId() {
        return appId;
    }

    /** The Estuary shuffle id of this generation. */
    public int shuffleId() {
        return shuffleId;
    }

    public String shuffleKey() {
        return shuffleKey;
    }

    public int numPartitions() {
        return current.length();
    }

    public PartitionLocation get(int partition) {
        return current.get(partition);
    }

    /** Installs {@code loc} unless the partition already has a location of the same or a newer epoch. */
    public void advance(PartitionLocation loc) {
        int p = loc.getPartitionId();
        while (true) {
            PartitionLocation old = current.get(p);
            if (old != null && old.getEpoch() >= loc.getEpoch()) return;
            if (current.compareAndSet(p, old, loc)) return;
        }
    }

    /** True once per (partition, epoch): whether the caller should ask for a soft split of that epoch. */
    boolean claimSplit(int partition, int epoch) {
        return claimOnce(splitRequested, partition, epoch);
    }

    /** True once per (partition, epoch): whether the caller should log that epoch's failure. */
    boolean claimFailureLog(int partition, int epoch) {
        return claimOnce(failureLogged, partition, epoch);
    }

    private static boolean claimOnce(AtomicReferenceArray<Integer> claims, int partition, int epoch) {
        while (true) {
            Integer prev = claims.get(partition);
            if (prev != null && prev >= epoch) return false;
            if (claims.compareAndSet(partition, prev, epoch)) return true;
        }
    }
}
