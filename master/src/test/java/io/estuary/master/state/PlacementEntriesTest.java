package io.estuary.master.state;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.protocol.LocationRole;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.master.protocol.ApplicationRegistered;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.protocol.SlotsAllocated;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A large placement logged in parts: bounded entries, published whole or not at all, snapshot between parts. */
class PlacementEntriesTest {
    private static final int MAX = 64 << 10;

    private static List<PartitionLocation> placement(int n) {
        List<PartitionLocation> out = new ArrayList<>(n);
        for (int p = 0; p < n; p++) {
            WorkerAddress a = WorkerAddress.newBuilder()
                    .setHost("worker-" + (p % 7))
                    .setRpcPort(1)
                    .build();
            WorkerAddress b = WorkerAddress.newBuilder()
                    .setHost("worker-" + ((p + 1) % 7))
                    .setRpcPort(1)
                    .build();
            out.add(PartitionLocation.newBuilder()
                    .setPartitionId(p)
                    .setWorker(a)
                    .setDisk("/d1")
                    .setRole(LocationRole.PRIMARY)
                    .setPeer(PartitionLocation.newBuilder()
                            .setPartitionId(p)
                            .setWorker(b)
                            .setDisk("/d2")
                            .setRole(LocationRole.REPLICA))
                    .build());
        }
        return out;
    }

    private static MasterCommand cmd(SlotsAllocated s) {
        return MasterCommand.newBuilder().setSlotsAllocated(s).build();
    }

    private static MasterStateMachine withApp() {
        MasterStateMachine sm = new MasterStateMachine();
        sm.apply(MasterCommand.newBuilder()
                .setApplicationRegistered(ApplicationRegistered.newBuilder().setAppId("a"))
                .build());
        return sm;
    }

    @Test
    void partsAreBoundedAndThePlacementAppearsWithItsLastPart() {
        List<PartitionLocation> locs = placement(20_000);
        List<SlotsAllocated> parts = PlacementEntries.split("a", 3, locs, MAX, 1);
        assertTrue(parts.size() > 10, parts.size() + " parts");
        MasterStateMachine sm = withApp();
        for (int i = 0; i < parts.size(); i++) {
            assertTrue(cmd(parts.get(i)).getSerializedSize() <= MAX + 200, "part " + i + " is too large");
            assertEquals(20_000, parts.get(i).getTotalLocations());
            assertNull(sm.read(s -> s.shuffle("a", 3)), "a placement must not appear before its last part");
            assertTrue((boolean) sm.read(s -> s.isShufflePlaced("a", 3)) || i == 0);
            sm.apply(cmd(parts.get(i)));
        }
        assertEquals(locs, sm.read(s -> s.shuffle("a", 3)));
        // A small placement stays one entry, as before parts existed.
        List<SlotsAllocated> one = PlacementEntries.split("a", 4, placement(10), MAX, 2);
        assertEquals(1, one.size());
        assertEquals(0, one.get(0).getTotalLocations());
    }

    @Test
    void anInterruptedPlacementIsReplacedAndAStrayPartIgnored() {
        List<SlotsAllocated> first = PlacementEntries.split("a", 3, placement(20_000), MAX, 3);
        List<PartitionLocation> second = placement(20_000).subList(0, 20_000);
        List<PartitionLocation> moved = new ArrayList<>();
        for (PartitionLocation l : second)
            moved.add(l.toBuilder().setDisk("/d9").build());
        List<SlotsAllocated> retry = PlacementEntries.split("a", 3, moved, MAX, 4);
        MasterStateMachine sm = withApp();
        // The leader failed after two parts; the next leader places the shuffle again from its first part.
        sm.apply(cmd(first.get(0)));
        sm.apply(cmd(first.get(1)));
        for (int i = 0; i < retry.size(); i++) {
            sm.apply(cmd(retry.get(i)));
            if (i == 1) sm.apply(cmd(first.get(2))); // a stray part of the interrupted placement changes nothing
        }
        assertEquals(moved, sm.read(s -> s.shuffle("a", 3)));
    }

    @Test
    void aSnapshotBetweenPartsRestoresThePartialPlacement() {
        List<PartitionLocation> locs = placement(20_000);
        List<SlotsAllocated> parts = PlacementEntries.split("a", 3, locs, MAX, 1);
        MasterStateMachine sm = withApp();
        int half = parts.size() / 2;
        for (int i = 0; i < half; i++) sm.apply(cmd(parts.get(i)));
        MasterStateMachine restored = new MasterStateMachine();
        restored.restore(sm.snapshot());
        assertArrayEquals(sm.snapshot().toByteArray(), restored.snapshot().toByteArray());
        for (int i = half; i < parts.size(); i++) restored.apply(cmd(parts.get(i)));
        assertEquals(locs, restored.read(s -> s.shuffle("a", 3)));
    }
}
