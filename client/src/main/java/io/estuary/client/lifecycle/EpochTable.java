package io.estuary.client.lifecycle;

import io.estuary.common.protocol.PartitionLocation;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Every location each partition of one shuffle generation was given, epoch by epoch. New epochs are numbered here,
 * under this object's lock, so two locations of one partition never share an epoch however revives and splits
 * race; and a partition gets at most one new epoch at a time: callers that find one being allocated wait for it.
 * Thread-safe.
 */
final class EpochTable {
    private final List<List<PartitionLocation>> epochs;
    private final List<CompletableFuture<PartitionLocation>> allocating;

    EpochTable(List<PartitionLocation> first) {
        epochs = new ArrayList<>(first.size());
        allocating = new ArrayList<>(first.size());
        for (PartitionLocation l : first) {
            List<PartitionLocation> one = new ArrayList<>(2);
            one.add(l);
            epochs.add(one);
            allocating.add(null);
        }
    }

    synchronized int numPartitions() {
        return epochs.size();
    }

    synchronized PartitionLocation current(int partition) {
        List<PartitionLocation> l = epochs.get(partition);
        return l.get(l.size() - 1);
    }

    synchronized List<PartitionLocation> currentAll() {
        List<PartitionLocation> out = new ArrayList<>(epochs.size());
        for (List<PartitionLocation> l : epochs) out.add(l.get(l.size() - 1));
        return out;
    }

    /** Every location ever given, all epochs of all partitions. */
    synchronized List<PartitionLocation> all() {
        List<PartitionLocation> out = new ArrayList<>();
        for (List<PartitionLocation> l : epochs) out.addAll(l);
        return out;
    }

    /** What a caller whose location of {@code partition} at {@code failedEpoch} failed should do. */
    static final class Claim {
        /** Completes with the location to use now. */
        final CompletableFuture<PartitionLocation> location;
        /** True when the caller must allocate the new epoch and {@link #install} it (or {@link #abandon}). */
        final boolean mustAllocate;

        Claim(CompletableFuture<PartitionLocation> location, boolean mustAllocate) {
            this.location = location;
            this.mustAllocate = mustAllocate;
        }
    }

    synchronized Claim claim(int partition, int failedEpoch) {
        PartitionLocation cur = current(partition);
        if (cur.getEpoch() > failedEpoch) return new Claim(CompletableFuture.completedFuture(cur), false);
        CompletableFuture<PartitionLocation> inFlight = allocating.get(partition);
        if (inFlight != null) return new Claim(inFlight, false);
        CompletableFuture<PartitionLocation> mine = new CompletableFuture<>();
        allocating.set(partition, mine);
        return new Claim(mine, true);
    }

    /** The next epoch number of a partition being allocated. */
    synchronized int nextEpoch(int partition) {
        return current(partition).getEpoch() + 1;
    }

    /**
     * Adds the new location of a claimed partition, which carries {@link #nextEpoch} (only the claimant allocates,
     * so that number cannot change meanwhile), and completes the claim's waiters.
     */
    void install(int partition, PartitionLocation loc) {
        CompletableFuture<PartitionLocation> waiters;
        synchronized (this) {
            if (allocating.get(partition) == null
                    || loc.getEpoch() != current(partition).getEpoch() + 1) {
                throw new IllegalStateException(
                        "partition " + partition + " epoch " + loc.getEpoch() + " was not claimed " + "(current epoch "
                                + current(partition).getEpoch() + ")");
            }
            epochs.get(partition).add(loc);
            waiters = allocating.set(partition, null);
        }
        waiters.complete(loc);
    }

    /** Gives up a claim: its waiters fail with {@code cause}, and the next failure may claim again. */
    void abandon(int partition, Throwable cause) {
        CompletableFuture<PartitionLocation> waiters;
        synchronized (this) {
            waiters = allocating.set(partition, null);
        }
        if (waiters != null) waiters.completeExceptionally(cause);
    }

    static PartitionLocation withEpoch(PartitionLocation loc, int epoch) {
        PartitionLocation.Builder b = loc.toBuilder().setEpoch(epoch);
        if (loc.hasPeer()) b.setPeer(loc.getPeer().toBuilder().setEpoch(epoch));
        return b.build();
    }
}
