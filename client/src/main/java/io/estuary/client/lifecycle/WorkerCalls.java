package io.estuary.client.lifecycle;

import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Groups the copies of locations by the worker holding them, for requests that go to each worker once. */
final class WorkerCalls {
    private WorkerCalls() {}

    static String id(WorkerAddress w) {
        return w.getHost() + ":" + w.getRpcPort();
    }

    /** Every copy (the primary, and the replica when there is one) of each location, by worker id. */
    static Map<String, List<PartitionLocation>> copiesByWorker(List<PartitionLocation> locations) {
        Map<String, List<PartitionLocation>> out = new LinkedHashMap<>();
        for (PartitionLocation l : locations) {
            out.computeIfAbsent(id(l.getWorker()), k -> new ArrayList<>()).add(l);
            if (l.hasPeer())
                out.computeIfAbsent(id(l.getPeer().getWorker()), k -> new ArrayList<>())
                        .add(l.getPeer());
        }
        return out;
    }
}
