package io.estuary.master;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Shuffles that workers report holding but the agreed state knows nothing of: an application or shuffle the master
 * forgot (its removal or unregistration dropped from the bounded record of them) or never placed (a worker's
 * leftovers). Such a shuffle expires once workers have reported it, unknown, for longer than the application timeout
 * on this leader: a live application heartbeats and registers well within that, and a deposed leader answering from
 * stale state is stale for seconds (its step-down wait), never for a whole timeout, so live data is never condemned.
 * Soft facts of the leader, not logged: a new leader starts afresh. Entries not reported for a timeout are dropped,
 * so this holds at most what workers hold. Thread-safe.
 */
final class UnknownShuffles {
    private final long graceMs;
    /** Shuffle key to {first reported, last reported}. */
    private final Map<String, long[]> seen = new ConcurrentHashMap<>();

    UnknownShuffles(long graceMs) {
        this.graceMs = graceMs;
    }

    /** A worker reports holding {@code key}, which the state does not know; true once it has been so long enough. */
    boolean reportedUnknown(String key, long nowMs) {
        long[] t = seen.computeIfAbsent(key, k -> new long[] {nowMs, nowMs});
        t[1] = nowMs;
        return nowMs - t[0] > graceMs;
    }

    /** The state knows {@code key} (again): it is not unknown. */
    void known(String key) {
        if (!seen.isEmpty()) seen.remove(key);
    }

    /** Drops what no worker reported for a grace period. */
    void prune(long nowMs) {
        seen.values().removeIf(t -> nowMs - t[1] > graceMs);
    }

    void reset() {
        seen.clear();
    }

    int size() {
        return seen.size();
    }
}
