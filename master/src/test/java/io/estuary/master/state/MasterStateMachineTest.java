package io.estuary.master.state;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.master.protocol.ApplicationRegistered;
import io.estuary.master.protocol.ApplicationRemoved;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.protocol.MasterCommandBatch;
import io.estuary.master.protocol.ShuffleUnregistered;
import io.estuary.master.protocol.SlotsAllocated;
import io.estuary.master.protocol.WorkerLost;
import io.estuary.master.protocol.WorkerRegistered;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class MasterStateMachineTest {
    private static WorkerAddress addr(int i) {
        return WorkerAddress.newBuilder()
                .setHost("h" + i)
                .setRpcPort(1)
                .setPushPort(2)
                .setFetchPort(3)
                .build();
    }

    static List<MasterCommand> history() {
        List<MasterCommand> cs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            cs.add(MasterCommand.newBuilder()
                    .setWorkerRegistered(WorkerRegistered.newBuilder()
                            .setWorker(WorkerInfo.newBuilder().setAddress(addr(i))))
                    .build());
        }
        for (String app : new String[] {"a", "b", "c"}) {
            cs.add(MasterCommand.newBuilder()
                    .setApplicationRegistered(ApplicationRegistered.newBuilder().setAppId(app))
                    .build());
            for (int s = 0; s < 3; s++) {
                cs.add(MasterCommand.newBuilder()
                        .setSlotsAllocated(SlotsAllocated.newBuilder()
                                .setAppId(app)
                                .setShuffleId(s)
                                .addLocations(PartitionLocation.newBuilder()
                                        .setPartitionId(0)
                                        .setWorker(addr(s))))
                        .build());
            }
        }
        cs.add(MasterCommand.newBuilder()
                .setWorkerStateChanged(io.estuary.master.protocol.WorkerStateChanged.newBuilder()
                        .setWorker(addr(1))
                        .setState(io.estuary.common.protocol.WorkerState.WORKER_DECOMMISSIONING))
                .build());
        cs.add(MasterCommand.newBuilder()
                .setShuffleUnregistered(
                        ShuffleUnregistered.newBuilder().setAppId("a").setShuffleId(1))
                .build());
        // One liveness check's findings, logged as one entry.
        cs.add(MasterCommand.newBuilder()
                .setBatch(MasterCommandBatch.newBuilder()
                        .addCommands(MasterCommand.newBuilder()
                                .setWorkerLost(WorkerLost.newBuilder().setWorker(addr(2))))
                        .addCommands(MasterCommand.newBuilder()
                                .setApplicationRemoved(
                                        ApplicationRemoved.newBuilder().setAppId("c"))))
                .build());
        return cs;
    }

    @Test
    void replicasThatApplyTheSameLogHoldTheSameStateAndSnapshotsRoundTrip() {
        MasterStateMachine a = new MasterStateMachine();
        MasterStateMachine b = new MasterStateMachine();
        for (MasterCommand c : history()) {
            a.apply(c);
            b.apply(c);
        }
        assertArrayEquals(a.snapshot().toByteArray(), b.snapshot().toByteArray());
        assertEquals(2, (int) a.read(s -> s.workers().size()), "the batch's WorkerLost was applied");
        assertFalse((boolean) a.read(s -> s.hasApplication("c")), "the batch's ApplicationRemoved was applied");
        assertTrue((boolean) a.read(s -> s.wasRemoved("c")));
        assertEquals(1, (int) a.read(s -> s.activeWorkers().size()), "h1 decommissioning, h2 lost");
        assertTrue((boolean) a.read(s -> s.isShuffleUnregistered("a", 1)));
        assertNull(a.read(s -> s.shuffle("a", 1)));
        assertNotNull(a.read(s -> s.shuffle("a", 2)));

        MasterStateMachine restored = new MasterStateMachine();
        restored.restore(a.snapshot());
        assertArrayEquals(a.snapshot().toByteArray(), restored.snapshot().toByteArray());
    }

    @Test
    void aPlacementCommittedAfterItsApplicationExpiredDoesNotResurrectIt() {
        MasterStateMachine m = new MasterStateMachine();
        m.apply(MasterCommand.newBuilder()
                .setApplicationRegistered(ApplicationRegistered.newBuilder().setAppId("x"))
                .build());
        m.apply(MasterCommand.newBuilder()
                .setApplicationRemoved(ApplicationRemoved.newBuilder().setAppId("x"))
                .build());
        m.apply(MasterCommand.newBuilder()
                .setSlotsAllocated(SlotsAllocated.newBuilder()
                        .setAppId("x")
                        .setShuffleId(0)
                        .addLocations(PartitionLocation.newBuilder().setWorker(addr(0))))
                .build());
        m.apply(MasterCommand.newBuilder()
                .setShuffleUnregistered(
                        ShuffleUnregistered.newBuilder().setAppId("x").setShuffleId(5))
                .build());
        assertFalse((boolean) m.read(s -> s.hasApplication("x")));
        assertNull(m.read(s -> s.shuffle("x", 0)));
        assertFalse((boolean) m.read(s -> s.isShuffleUnregistered("x", 5)), "no bookkeeping for a removed app");
        assertEquals(0, m.snapshot().getUnregisteredCount());
        // It comes back cleanly when it registers again.
        m.apply(MasterCommand.newBuilder()
                .setApplicationRegistered(ApplicationRegistered.newBuilder().setAppId("x"))
                .build());
        assertFalse((boolean) m.read(s -> s.wasRemoved("x")));
    }

    /**
     * The bounds of the remembered removals come from the configuration (the defaults are tested at scale by
     * LongLivedApplicationTest): smaller ones are honoured, and a snapshot restores under the same ones.
     */
    @Test
    void theConfiguredBoundsOfTheRememberedRemovalsAreHonoured() {
        EstuaryConf conf = new EstuaryConf()
                .set(MasterConfig.MAX_REMOVED_APPLICATIONS, "2")
                .set(MasterConfig.MAX_UNREGISTERED_SHUFFLE_RANGES, "3");
        MasterStateMachine m = new MasterStateMachine(conf);
        for (String app : new String[] {"a", "b", "c", "live"}) {
            m.apply(MasterCommand.newBuilder()
                    .setApplicationRegistered(ApplicationRegistered.newBuilder().setAppId(app))
                    .build());
        }
        for (String app : new String[] {"a", "b", "c"}) {
            m.apply(MasterCommand.newBuilder()
                    .setApplicationRemoved(ApplicationRemoved.newBuilder().setAppId(app))
                    .build());
        }
        assertFalse((boolean) m.read(s -> s.wasRemoved("a")), "the oldest removal is dropped past a bound of 2");
        assertTrue((boolean) m.read(s -> s.wasRemoved("b") && s.wasRemoved("c")));
        for (int id = 0; id < 10; id += 2) { // five ranges of one id each
            m.apply(MasterCommand.newBuilder()
                    .setShuffleUnregistered(
                            ShuffleUnregistered.newBuilder().setAppId("live").setShuffleId(id))
                    .build());
        }
        assertEquals(3, (int) m.read(MasterState::unregisteredShuffleCount));
        assertFalse((boolean) m.read(s -> s.isShuffleUnregistered("live", 2)), "the lowest ranges are dropped");
        assertTrue((boolean) m.read(s -> s.isShuffleUnregistered("live", 4) && s.isShuffleUnregistered("live", 8)));

        MasterStateMachine restored = new MasterStateMachine(conf);
        restored.restore(m.snapshot());
        assertEquals(m.snapshot(), restored.snapshot());
        // The defaults (10,000 and 1,000) would have kept every one of them.
        MasterStateMachine defaults = new MasterStateMachine();
        defaults.restore(m.snapshot());
        defaults.apply(MasterCommand.newBuilder()
                .setShuffleUnregistered(
                        ShuffleUnregistered.newBuilder().setAppId("live").setShuffleId(0))
                .build());
        assertEquals(4, (int) defaults.read(MasterState::unregisteredShuffleCount));
    }
}
