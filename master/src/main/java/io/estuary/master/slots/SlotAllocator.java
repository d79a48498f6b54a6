package io.estuary.master.slots;

import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerInfo;
import java.util.List;

/** Decides where each partition of a new shuffle is written. Runs on the leader; its result is logged. */
public interface SlotAllocator {
    /**
     * One location per partition, ordered by partition id, on the given workers (each alive; disks carry their
     * latest reported status and load). With {@code request.replicate}, each location has a peer on another worker
     * when at least two workers are usable, and none otherwise. Throws a FATAL {@code StatusException} with a clear
     * message when no placement is possible.
     */
    List<PartitionLocation> allocate(SlotRequest request, List<WorkerInfo> workers);
}
