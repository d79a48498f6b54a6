package io.estuary.master.slots;

import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.DiskStatus;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.master.state.WorkerId;
import java.util.ArrayList;
import java.util.List;

/** Which workers a shuffle may use: those with a healthy disk, at most maxWorkers per application. */
final class WorkerSelection {
    private WorkerSelection() {}

    static boolean hasHealthyDisk(WorkerInfo w) {
        for (DiskInfo d : w.getDisksList()) if (d.getStatus() == DiskStatus.DISK_HEALTHY) return true;
        return false;
    }

    /**
     * Workers with a healthy disk; when there are more than {@code maxWorkers}, the application's current workers
     * first, then others starting at {@code rotation} (so successive applications spread over the cluster).
     */
    static List<WorkerInfo> forApplication(SlotRequest req, List<WorkerInfo> workers, int maxWorkers, int rotation) {
        List<WorkerInfo> usable = new ArrayList<>();
        for (WorkerInfo w : workers) if (hasHealthyDisk(w)) usable.add(w);
        if (usable.isEmpty()) {
            throw new StatusException(
                    StatusCode.FATAL,
                    "no slots for " + req + ": " + workers.size() + " workers registered, none with a healthy disk");
        }
        if (usable.size() <= maxWorkers) return usable;
        List<WorkerInfo> chosen = new ArrayList<>();
        for (WorkerInfo w : usable) {
            if (chosen.size() < maxWorkers && req.appWorkers.contains(WorkerId.of(w.getAddress()))) chosen.add(w);
        }
        int n = usable.size();
        for (int i = 0; i < n && chosen.size() < maxWorkers; i++) {
            WorkerInfo w = usable.get(Math.floorMod(rotation + i, n));
            if (!req.appWorkers.contains(WorkerId.of(w.getAddress()))) chosen.add(w);
        }
        return chosen;
    }
}
