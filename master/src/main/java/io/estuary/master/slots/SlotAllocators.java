package io.estuary.master.slots;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import java.util.HashMap;
import java.util.Map;

/** The allocator a master's configuration asks for. */
public final class SlotAllocators {
    private SlotAllocators() {}

    public static SlotAllocator fromConf(EstuaryConf conf) {
        Map<String, String> racks = new HashMap<>();
        for (String e : conf.get(MasterConfig.RACKS))
            racks.put(e.substring(0, e.indexOf('=')), e.substring(e.indexOf('=') + 1));
        int maxWorkers = conf.get(MasterConfig.MAX_WORKERS_PER_APP);
        if ("roundrobin".equalsIgnoreCase(conf.get(MasterConfig.SLOT_POLICY))) {
            return new RoundRobinSlotAllocator(maxWorkers, racks);
        }
        return new LoadAwareSlotAllocator(
                conf.get(MasterConfig.SLOW_DISK_THRESHOLD),
                conf.get(MasterConfig.MAX_SLOW_DISK_FRACTION),
                maxWorkers,
                racks);
    }
}
