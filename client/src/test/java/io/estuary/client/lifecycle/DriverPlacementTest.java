package io.estuary.client.lifecycle;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.protocol.LocationRole;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DriverPlacementTest {
    private static WorkerAddress w(int i) {
        return WorkerAddress.newBuilder()
                .setHost("w" + i)
                .setRpcPort(10)
                .setPushPort(11)
                .setFetchPort(12)
                .build();
    }

    /** A replicated shuffle on three workers, partitions 0..5. */
    private static List<PartitionLocation> shuffle() {
        List<PartitionLocation> out = new ArrayList<>();
        for (int p = 0; p < 6; p++) {
            out.add(PartitionLocation.newBuilder()
                    .setPartitionId(p)
                    .setWorker(w(p % 3))
                    .setDisk("/d" + (p % 2))
                    .setRole(LocationRole.PRIMARY)
                    .setPeer(PartitionLocation.newBuilder()
                            .setPartitionId(p)
                            .setWorker(w((p + 1) % 3))
                            .setDisk("/d0")
                            .setRole(LocationRole.REPLICA))
                    .build());
        }
        return out;
    }

    @Test
    void placesOnTheShufflesOwnWorkersAvoidingFailedOnesWithTheReplicaElsewhere() {
        Set<String> avoid = new HashSet<>(Collections.singleton(WorkerCalls.id(w(1))));
        List<PartitionLocation> locs = DriverPlacement.place(Arrays.asList(4, 1, 5), shuffle(), avoid, true, 0);
        assertEquals(3, locs.size());
        assertEquals(
                Arrays.asList(4, 1, 5),
                Arrays.asList(
                        locs.get(0).getPartitionId(),
                        locs.get(1).getPartitionId(),
                        locs.get(2).getPartitionId()));
        for (PartitionLocation l : locs) {
            assertNotEquals(w(1), l.getWorker(), "placed on a failed worker");
            assertTrue(l.hasPeer());
            assertNotEquals(w(1), l.getPeer().getWorker(), "replica on a failed worker");
            assertNotEquals(l.getWorker(), l.getPeer().getWorker(), "replica on the primary's worker");
            assertEquals(l.getPartitionId(), l.getPeer().getPartitionId());
            assertEquals(LocationRole.REPLICA, l.getPeer().getRole());
            assertFalse(l.getDisk().isEmpty());
        }
    }

    @Test
    void oneWorkerLeftMeansOneCopyAndNoneLeftIsATypedRetry() {
        Set<String> avoid = new HashSet<>(Arrays.asList(WorkerCalls.id(w(0)), WorkerCalls.id(w(1))));
        List<PartitionLocation> locs = DriverPlacement.place(Arrays.asList(0, 1), shuffle(), avoid, true, 3);
        for (PartitionLocation l : locs) {
            assertEquals(w(2), l.getWorker());
            assertFalse(l.hasPeer());
        }
        avoid.add(WorkerCalls.id(w(2)));
        StatusException e = assertThrows(
                StatusException.class, () -> DriverPlacement.place(Arrays.asList(0), shuffle(), avoid, true, 0));
        assertEquals(StatusCode.RETRY_LATER, e.status());
    }
}
