package io.estuary.master;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Last heartbeat of every worker and application, kept in memory only: heartbeats that change nothing must not
 * become log entries. A new leader starts every clock afresh, so nothing is declared lost before it has had a full
 * timeout to hear from it.
 */
final class LivenessTracker {
    private final Map<String, Long> lastSeen = new ConcurrentHashMap<>();
    private final long timeoutMs;

    LivenessTracker(long timeoutMs) {
        this.timeoutMs = timeoutMs;
    }

    void touch(String id, long nowMs) {
        lastSeen.put(id, nowMs);
    }

    /** The last heartbeat of {@code id}, or null when none is tracked (never heard, forgotten, or a reset). */
    Long lastSeen(String id) {
        return lastSeen.get(id);
    }

    void forget(String id) {
        lastSeen.remove(id);
    }

    /** Starts every clock afresh (after a leader change), so everything gets a full timeout to be heard from. */
    void reset() {
        lastSeen.clear();
    }

    /** Ids tracked whose last heartbeat is older than the timeout; {@code known} are ids to start tracking now. */
    List<String> expired(Iterable<String> known, long nowMs) {
        for (String id : known) lastSeen.putIfAbsent(id, nowMs);
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, Long> e : lastSeen.entrySet()) {
            if (nowMs - e.getValue() > timeoutMs) out.add(e.getKey());
        }
        return out;
    }
}
