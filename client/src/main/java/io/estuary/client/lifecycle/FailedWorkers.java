package io.estuary.client.lifecycle;

import io.estuary.common.protocol.WorkerAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Workers this application saw fail (refused connections, reservations that failed). The driver places nothing new
 * on them for a while, whatever the master believes, and reports them to the master, which excludes a worker once
 * enough applications report it. Thread-safe.
 */
final class FailedWorkers {
    /** Long enough to outlast a dying worker's last heartbeats; short enough that a restarted worker is used again. */
    static final long AVOID_MS = 120_000;

    private final Map<String, Long> since = new ConcurrentHashMap<>();
    private final LongSupplier clock;

    FailedWorkers(LongSupplier clock) {
        this.clock = clock;
    }

    /** Records failures; returns the workers not already recorded (to report). */
    List<WorkerAddress> add(Collection<WorkerAddress> workers) {
        List<WorkerAddress> fresh = new ArrayList<>();
        long now = clock.getAsLong();
        for (WorkerAddress w : workers) {
            Long prev = since.put(WorkerCalls.id(w), now);
            if (prev == null || now - prev > AVOID_MS) fresh.add(w);
        }
        return fresh;
    }

    /** Worker ids to avoid now. */
    List<String> ids() {
        long now = clock.getAsLong();
        since.values().removeIf(t -> now - t > AVOID_MS);
        return new ArrayList<>(since.keySet());
    }
}
