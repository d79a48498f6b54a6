package io.estuary.master.state;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class ShuffleIdRangesTest {
    @Test
    void consecutiveIdsAreOneRangeInAnyOrder() {
        ShuffleIdRanges r = new ShuffleIdRanges();
        for (int id : new int[] {5, 3, 4, 7, 6, 2}) r.add(id, 10);
        assertEquals(Map.of(2, 7), r.ranges());
        assertTrue(r.contains(2) && r.contains(7) && r.contains(4));
        assertFalse(r.contains(1) || r.contains(8));
    }

    @Test
    void aLiveShuffleSplitsRangesAndFillingTheGapJoinsThem() {
        ShuffleIdRanges r = new ShuffleIdRanges();
        for (int id = 0; id < 10; id++) if (id != 4) r.add(id, 10);
        assertEquals(new TreeMap<>(Map.of(0, 3, 5, 9)), r.ranges());
        assertFalse(r.contains(4));
        r.add(4, 10);
        assertEquals(Map.of(0, 9), r.ranges());
    }

    @Test
    void theLowestRangesAreDroppedPastTheBound() {
        ShuffleIdRanges r = new ShuffleIdRanges();
        for (int id = 0; id < 20; id += 2) r.add(id, 3);
        assertEquals(3, r.rangeCount());
        assertEquals(new TreeMap<>(Map.of(14, 14, 16, 16, 18, 18)), r.ranges());
        assertFalse(r.contains(0));
    }

    @Test
    void restoredRangesMergeWithOverlapsAndExtremes() {
        ShuffleIdRanges r = new ShuffleIdRanges();
        r.addRange(10, 20);
        r.addRange(0, 5);
        r.addRange(4, 12);
        r.addRange(Integer.MAX_VALUE - 1, Integer.MAX_VALUE);
        r.addRange(22, 30);
        assertEquals(new TreeMap<>(Map.of(0, 20, 22, 30, Integer.MAX_VALUE - 1, Integer.MAX_VALUE)), r.ranges());
        r.addRange(21, 21);
        assertEquals(new TreeMap<>(Map.of(0, 30, Integer.MAX_VALUE - 1, Integer.MAX_VALUE)), r.ranges());
    }

    @Test
    void aSnapshotRestoresTheSameRangesAndOlderSnapshotsListSingleIds() {
        MasterStateMachine a = new MasterStateMachine();
        a.apply(io.estuary.master.protocol.MasterCommand.newBuilder()
                .setApplicationRegistered(io.estuary.master.protocol.ApplicationRegistered.newBuilder()
                        .setAppId("app"))
                .build());
        for (int id = 0; id < 50; id++) {
            if (id == 20) continue;
            int s = id;
            a.apply(io.estuary.master.protocol.MasterCommand.newBuilder()
                    .setShuffleUnregistered(io.estuary.master.protocol.ShuffleUnregistered.newBuilder()
                            .setAppId("app")
                            .setShuffleId(s))
                    .build());
        }
        io.estuary.master.protocol.MasterSnapshot snap = a.snapshot();
        MasterStateMachine b = new MasterStateMachine();
        b.restore(snap);
        assertEquals(snap, b.snapshot());
        assertEquals(2, (int) b.read(MasterState::unregisteredShuffleCount));
        assertFalse((boolean) b.read(s -> s.isShuffleUnregistered("app", 20)));
        assertTrue((boolean) b.read(s -> s.isShuffleUnregistered("app", 49)));

        MasterStateMachine old = new MasterStateMachine();
        old.restore(io.estuary.master.protocol.MasterSnapshot.newBuilder()
                .addUnregistered(io.estuary.master.protocol.UnregisteredShuffles.newBuilder()
                        .setAppId("app")
                        .addShuffleIds(3)
                        .addShuffleIds(4)
                        .addShuffleIds(9))
                .build());
        assertTrue((boolean) old.read(s -> s.isShuffleUnregistered("app", 4) && s.isShuffleUnregistered("app", 9)));
        assertFalse((boolean) old.read(s -> s.isShuffleUnregistered("app", 5)));
    }
}
