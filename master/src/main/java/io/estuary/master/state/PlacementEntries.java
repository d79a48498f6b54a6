package io.estuary.master.state;

import io.estuary.common.protocol.PartitionLocation;
import io.estuary.master.protocol.SlotsAllocated;
import java.util.ArrayList;
import java.util.List;

/**
 * Cuts a shuffle's placement into {@link SlotsAllocated} log entries of bounded size. Ratis writes an entry whole
 * into its log's write buffer (8 MiB by default) and its log fails on a larger one, refusing every later write; a
 * replicated placement of the 200,000 partitions a shuffle may have takes about 25 MB. A placement that fits one
 * entry is logged as one, as before parts existed. Stateless.
 */
public final class PlacementEntries {
    /** Well under Ratis's write buffer and its appender's batch limit, so an entry never approaches either. */
    public static final int MAX_ENTRY_BYTES = 1 << 20;

    private PlacementEntries() {}

    /**
     * The entries that log {@code locations}, in the order they must be logged (each after the previous);
     * {@code placementId} tells this placement's parts from those of any other (an interrupted one).
     */
    public static List<SlotsAllocated> split(
            String appId, int shuffleId, List<PartitionLocation> locations, int maxEntryBytes, long placementId) {
        List<SlotsAllocated> out = new ArrayList<>();
        SlotsAllocated.Builder part =
                SlotsAllocated.newBuilder().setAppId(appId).setShuffleId(shuffleId);
        int bytes = 0;
        for (int i = 0; i < locations.size(); i++) {
            PartitionLocation l = locations.get(i);
            int size = l.getSerializedSize() + 8; // the field's tag and length
            if (part.getLocationsCount() > 0 && bytes + size > maxEntryBytes) {
                out.add(part.build());
                part = SlotsAllocated.newBuilder()
                        .setAppId(appId)
                        .setShuffleId(shuffleId)
                        .setFirstLocation(i);
                bytes = 0;
            }
            part.addLocations(l);
            bytes += size;
        }
        out.add(part.build());
        if (out.size() == 1) return out; // one entry: the whole placement (total_locations 0)
        List<SlotsAllocated> parts = new ArrayList<>(out.size());
        for (SlotsAllocated p : out) {
            parts.add(p.toBuilder()
                    .setTotalLocations(locations.size())
                    .setPlacementId(placementId)
                    .build());
        }
        return parts;
    }
}
