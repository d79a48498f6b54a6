package io.estuary.client.lifecycle;

import com.google.protobuf.ByteString;
import io.estuary.common.protocol.PartitionLocation;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One slot lease from the master: a placement pattern it chose, which the driver places shuffles by until the lease
 * expires. Partitions are dealt over the pattern in turn, continuing from where the previous shuffle ended, so that
 * many small shuffles spread over every worker and disk of the pattern as one large one would. Immutable but for
 * that turn; thread-safe.
 */
final class SlotLease {
    private final List<PartitionLocation> pattern;
    private final Set<String> workers = new HashSet<>();
    private final long expiresAtNanos;
    private final ByteString sealedSecret;
    private final ByteString sealedPrincipal;
    private final AtomicInteger turn = new AtomicInteger();

    SlotLease(
            List<PartitionLocation> pattern, long expiresAtNanos, ByteString sealedSecret, ByteString sealedPrincipal) {
        if (pattern.isEmpty()) throw new IllegalArgumentException("a slot lease needs at least one location");
        this.pattern = new ArrayList<>(pattern);
        this.expiresAtNanos = expiresAtNanos;
        this.sealedSecret = sealedSecret;
        this.sealedPrincipal = sealedPrincipal;
        for (PartitionLocation l : pattern) {
            workers.add(WorkerCalls.id(l.getWorker()));
            if (l.hasPeer()) workers.add(WorkerCalls.id(l.getPeer().getWorker()));
        }
    }

    /** Whether it may still be placed by at {@code nowNanos} without a copy on a worker of {@code avoid}. */
    boolean usable(long nowNanos, Collection<String> avoid) {
        if (nowNanos - expiresAtNanos >= 0) return false;
        for (String w : avoid) if (workers.contains(w)) return false;
        return true;
    }

    /** The master's seal of the application's secret for the workers (empty without authentication). */
    ByteString sealedSecret() {
        return sealedSecret;
    }

    /** The master's seal of the application's principal for the workers (empty without authentication). */
    ByteString sealedPrincipal() {
        return sealedPrincipal;
    }

    /** Partitions 0..n-1 at epoch 0, each on the next pattern entry (its replica with it). */
    List<PartitionLocation> place(int numPartitions) {
        int from = turn.getAndAdd(numPartitions);
        List<PartitionLocation> out = new ArrayList<>(numPartitions);
        for (int p = 0; p < numPartitions; p++) {
            PartitionLocation entry = pattern.get(Math.floorMod(from + p, pattern.size()));
            PartitionLocation.Builder loc = entry.toBuilder().setPartitionId(p).setEpoch(0);
            if (entry.hasPeer()) {
                loc.setPeer(entry.getPeer().toBuilder().setPartitionId(p).setEpoch(0));
            }
            out.add(loc.build());
        }
        return out;
    }
}
