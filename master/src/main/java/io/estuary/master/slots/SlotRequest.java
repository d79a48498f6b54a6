package io.estuary.master.slots;

import java.util.Collections;
import java.util.Set;

/** What a new shuffle asks for, and which workers its application already uses. */
public final class SlotRequest {
    public final String appId;
    public final int shuffleId;
    public final int numPartitions;
    public final boolean replicate;
    /** WorkerIds holding the application's other shuffles (kept, so the app stays within maxWorkers). */
    public final Set<String> appWorkers;

    public SlotRequest(String appId, int shuffleId, int numPartitions, boolean replicate, Set<String> appWorkers) {
        this.appId = appId;
        this.shuffleId = shuffleId;
        this.numPartitions = numPartitions;
        this.replicate = replicate;
        this.appWorkers = appWorkers == null ? Collections.emptySet() : appWorkers;
    }

    @Override
    public String toString() {
        return "shuffle " + shuffleId + " of " + appId;
    }
}
