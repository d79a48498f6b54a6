package io.estuary.client.write;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.estuary.common.protocol.LocationRole;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * How a map's last partial batches are grouped into merged pushes while other tasks' revives move partitions in the
 * shared {@link LocationTable}. A merged push goes to one worker; a partition in it whose primary had moved elsewhere
 * landed in that worker's replica file of the new epoch, acknowledged but never read (WorkerLossRecoveryTest lost a
 * batch that way, about once in ten runs under load).
 */
class MergedRemaindersTest {
    private static final WorkerAddress A = worker(1);
    private static final WorkerAddress B = worker(2);
    private static final WorkerAddress DEAD = worker(3);

    private static WorkerAddress worker(int n) {
        return WorkerAddress.newBuilder()
                .setHost("127.0.0.1")
                .setRpcPort(1000 + n)
                .setPushPort(2000 + n)
                .setFetchPort(3000 + n)
                .build();
    }

    private static PartitionLocation loc(int partition, int epoch, WorkerAddress primary, WorkerAddress replica) {
        PartitionLocation peer = PartitionLocation.newBuilder()
                .setPartitionId(partition)
                .setEpoch(epoch)
                .setRole(LocationRole.REPLICA)
                .setWorker(replica)
                .build();
        return PartitionLocation.newBuilder()
                .setPartitionId(partition)
                .setEpoch(epoch)
                .setRole(LocationRole.PRIMARY)
                .setWorker(primary)
                .setPeer(peer)
                .build();
    }

    @Test
    void aPartitionRevivedWhileRemaindersAreGroupedStaysWithTheLocationItWasGroupedBy() {
        // Epoch 0 of every partition: primary A, replica on a worker that just died.
        List<PartitionLocation> first = new ArrayList<>();
        for (int p = 0; p < 6; p++) first.add(loc(p, 0, A, DEAD));
        LocationTable table = new LocationTable("app", 0, first);
        int[] fill = {10, 10, 0, 10, 10, 10};
        // Another task's revive of partition 3 lands right after this task looked partition 3 up: epoch 1 has its
        // primary on B and its replica on A, so A holds epoch 1 of partition 3 as a replica.
        PartitionLocation revived = loc(3, 1, B, A);
        int[] reads = new int[6];
        Map<String, List<PartitionLocation>> groups = MapOutputWriter.remaindersByWorker(fill, p -> {
            reads[p]++;
            PartitionLocation l = table.get(p);
            if (p == 3) table.advance(revived);
            return l;
        });

        List<Integer> seen = new ArrayList<>();
        for (Map.Entry<String, List<PartitionLocation>> g : groups.entrySet()) {
            for (PartitionLocation l : g.getValue()) {
                // Every location in a group has its primary on the worker the group's merged push goes to.
                assertEquals(
                        g.getKey(),
                        l.getWorker().getHost() + ":" + l.getWorker().getPushPort(),
                        "partition " + l.getPartitionId() + " epoch " + l.getEpoch()
                                + " grouped with the wrong worker");
                seen.add(l.getPartitionId());
            }
        }
        assertEquals(
                java.util.Arrays.asList(0, 1, 3, 4, 5),
                seen,
                "each partition with buffered data exactly once, in order");
        assertEquals(
                0,
                groups.get("127.0.0.1:2001").get(2).getEpoch(),
                "partition 3 goes out at the epoch it was "
                        + "grouped by (its failed replica sends it on to epoch 1 through the usual revive)");
        for (int p = 0; p < 6; p++) assertEquals(fill[p] > 0 ? 1 : 0, reads[p], "partition " + p + " looked up once");
        assertEquals(1, table.get(3).getEpoch());
    }

    @Test
    void partitionsAreGroupedByTheWorkerOfTheirPrimary() {
        List<PartitionLocation> locs = new ArrayList<>();
        for (int p = 0; p < 5; p++) locs.add(p % 2 == 0 ? loc(p, 0, A, B) : loc(p, 2, B, A));
        LocationTable table = new LocationTable("app", 0, locs);
        Map<String, List<PartitionLocation>> groups =
                MapOutputWriter.remaindersByWorker(new int[] {1, 1, 1, 1, 1}, table::get);
        assertEquals(2, groups.size());
        assertEquals(3, groups.get("127.0.0.1:2001").size());
        assertEquals(2, groups.get("127.0.0.1:2002").size());
    }
}
