package io.estuary.worker.storage;

import java.util.concurrent.atomic.LongAdder;

/** What the {@link PartitionCache} has done since the worker started, for its metrics. Thread-safe. */
public final class CacheCounters {
    final LongAdder hits = new LongAdder();
    final LongAdder misses = new LongAdder();
    final LongAdder evictions = new LongAdder();
    final LongAdder heldBytes = new LongAdder();
    final LongAdder writeBacks = new LongAdder();

    /** Chunks served from memory. */
    public long hits() {
        return hits.sum();
    }

    /** Chunks of files small enough to cache that were not in memory (not filled yet, evicted, or refused). */
    public long misses() {
        return misses.sum();
    }

    /** Entries evicted to make room or under memory pressure (not counting removed shuffles). */
    public long evictions() {
        return evictions.sum();
    }

    /** Bytes of replica copies held in memory in place of their files, now. */
    public long heldBytes() {
        return heldBytes.sum();
    }

    /** Held copies written to their files since the start (primaries at once; replicas for room, or at a stop). */
    public long writeBacks() {
        return writeBacks.sum();
    }
}
