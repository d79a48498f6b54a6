package io.estuary.master;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.WorkerState;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.protocol.WorkerLost;
import io.estuary.master.protocol.WorkerRegistered;
import io.estuary.master.protocol.WorkerStateChanged;
import io.estuary.master.state.LocalStateLog;
import io.estuary.master.state.WorkerId;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class WorkerFailureTrackerTest {
    private static final long WINDOW = 60_000;
    private static final long GRACE = 300_000;

    private LocalStateLog log;
    private long now;

    private static WorkerAddress addr(int i) {
        return WorkerAddress.newBuilder()
                .setHost("h" + i)
                .setRpcPort(1)
                .setPushPort(2)
                .setFetchPort(3)
                .build();
    }

    private static List<WorkerAddress> one(int i) {
        return Collections.singletonList(addr(i));
    }

    @BeforeEach
    void cluster() {
        log = new LocalStateLog();
        now = 1_000_000;
        register(6);
    }

    private void register(int workers) {
        for (int i = 0; i < workers; i++) {
            log.submit(MasterCommand.newBuilder()
                            .setWorkerRegistered(WorkerRegistered.newBuilder()
                                    .setWorker(WorkerInfo.newBuilder()
                                            .setAddress(addr(i))
                                            .addDisks(io.estuary.common.protocol.DiskInfo.newBuilder()
                                                    .setMountPoint("/d1"))))
                            .build())
                    .join();
        }
    }

    /** Without a cap on the excluded fraction, as the cases below the cap need. */
    private WorkerFailureTracker tracker(int threshold) {
        return new WorkerFailureTracker(
                log, threshold, WINDOW, GRACE, 1.0, WorkerFailureTracker.OwnEvidence.NONE, () -> now);
    }

    private int excluded(int workers) {
        int n = 0;
        for (int i = 0; i < workers; i++) if (state(i) == WorkerState.WORKER_EXCLUDED) n++;
        return n;
    }

    /**
     * The probe: a fault between the applications and the workers (a switch) makes two applications report every
     * worker. Reports alone exclude no more than the cap; workers whose own heartbeats show trouble may go past it;
     * the last two workers that can serve never go.
     */
    @Test
    void reportsOfEveryWorkerExcludeNoMoreThanTheCap() {
        register(10);
        java.util.Set<Integer> troubled = new java.util.HashSet<>();
        WorkerFailureTracker t = new WorkerFailureTracker(
                log,
                2,
                WINDOW,
                GRACE,
                0.3,
                id -> troubled.contains(Integer.parseInt(id.substring(1, id.indexOf(':')))),
                () -> now);
        List<WorkerAddress> all = new java.util.ArrayList<>();
        for (int i = 0; i < 10; i++) all.add(addr(i));
        t.report("app-a", all, "connection timed out").join();
        t.report("app-b", all, "connection timed out").join();
        System.out.printf("EXCLUSION PROBE: two applications reported all 10 workers: %d excluded%n", excluded(10));
        assertEquals(3, excluded(10), "30% of 10 workers");
        // A worker whose own heartbeats are late is excluded past the cap.
        troubled.add(9);
        t.report("app-c", one(9), "connection timed out").join();
        assertEquals(WorkerState.WORKER_EXCLUDED, state(9));
        assertTrue(reason(9).contains("its own heartbeats"), reason(9));
        // Once an exclusion is lifted, a reported worker may take its place under the cap.
        now += GRACE;
        assertEquals(4, check(t));
        t.report("app-a", one(5), "x").join();
        t.report("app-b", one(5), "x").join();
        assertEquals(WorkerState.WORKER_EXCLUDED, state(5));

        // However troubled, the last two workers that can serve stay.
        check(t);
        for (int i = 0; i < 10; i++) troubled.add(i);
        t.report("app-a", all, "x").join();
        t.report("app-b", all, "x").join();
        assertEquals(8, excluded(10));
    }

    private WorkerState state(int i) {
        return log.stateMachine().read(s -> s.workerState(WorkerId.of(addr(i))));
    }

    private String reason(int i) {
        return log.stateMachine().read(s -> s.workerStateReason(WorkerId.of(addr(i))));
    }

    /** One liveness check: logs what the tracker decides, returns how many workers it took back. */
    private int check(WorkerFailureTracker t) {
        List<MasterCommand> cs = t.readmissions();
        for (MasterCommand c : cs) log.submit(c).join();
        return cs.size();
    }

    private void operator(int i, WorkerState s) {
        log.submit(MasterCommand.newBuilder()
                        .setWorkerStateChanged(WorkerStateChanged.newBuilder()
                                .setWorker(addr(i))
                                .setState(s)
                                .setReason("admin API"))
                        .build())
                .join();
    }

    @Test
    void distinctApplicationsWithinTheWindowExcludeAndTheGraceTakesTheWorkerBack() {
        WorkerFailureTracker t = tracker(2);
        t.report("app-a", one(0), "connection refused").join();
        t.report("app-a", one(0), "connection refused").join();
        assertEquals(WorkerState.WORKER_ACTIVE, state(0), "the same application twice is one reporter");
        now += 10_000;
        t.report("app-b", one(0), "push timed out").join();
        assertEquals(WorkerState.WORKER_EXCLUDED, state(0));
        assertEquals("reported failing by 2 applications: push timed out", reason(0));
        assertEquals(WorkerState.WORKER_ACTIVE, state(1), "other workers are untouched");

        now += GRACE - 1;
        assertEquals(0, check(t), "still within its grace");
        assertEquals(WorkerState.WORKER_EXCLUDED, state(0));
        now += 1;
        assertEquals(1, check(t));
        assertEquals(WorkerState.WORKER_ACTIVE, state(0));
        assertEquals(0, check(t), "taken back once");

        // Back in, it is counted afresh: one new report is not enough.
        now += 5_000;
        t.report("app-c", one(0), "again").join();
        assertEquals(WorkerState.WORKER_ACTIVE, state(0));
    }

    @Test
    void reportsOlderThanTheWindowDoNotCount() {
        WorkerFailureTracker t = tracker(2);
        t.report("app-a", one(1), "x").join();
        now += WINDOW;
        t.report("app-b", one(1), "y").join();
        assertEquals(WorkerState.WORKER_ACTIVE, state(1), "app-a's report fell out of the window");
        now += WINDOW - 1;
        t.report("app-c", one(1), "z").join();
        assertEquals(WorkerState.WORKER_EXCLUDED, state(1), "app-b's report was still in the window");

        // Old reports are dropped by the periodic check, not kept forever.
        t.report("app-a", one(2), "x").join();
        assertEquals(Collections.singleton(WorkerId.of(addr(2))), t.reported());
        now += WINDOW;
        check(t);
        assertTrue(t.reported().isEmpty());
    }

    @Test
    void thresholdOneExcludesOnASingleReportAndUnknownWorkersAreIgnored() {
        WorkerFailureTracker t = tracker(1);
        WorkerAddress stranger =
                WorkerAddress.newBuilder().setHost("nobody").setRpcPort(9).build();
        t.report("app-a", java.util.Arrays.asList(stranger, addr(2)), "reset by peer")
                .join();
        assertEquals(WorkerState.WORKER_EXCLUDED, state(2));
        assertTrue(reason(2).startsWith("reported failing by 1 applications: "), reason(2));
        assertTrue(t.reported().isEmpty(), "nothing is kept about an unknown worker");
        assertEquals(6, (int) log.stateMachine().read(s -> s.workers().size()));
    }

    @Test
    void anOperatorsDecisionIsNeverUndone() {
        WorkerFailureTracker t = tracker(1);
        // Excluded by an operator: reports change nothing, and the grace never lifts it.
        operator(0, WorkerState.WORKER_EXCLUDED);
        t.report("app-a", one(0), "x").join();
        assertEquals("admin API", reason(0));
        // Automatically excluded, then decommissioned or re-excluded by an operator: theirs stands.
        t.report("app-a", one(1), "x").join();
        t.report("app-a", one(2), "x").join();
        assertEquals(WorkerState.WORKER_EXCLUDED, state(1));
        assertEquals(WorkerState.WORKER_EXCLUDED, state(2));
        operator(1, WorkerState.WORKER_DECOMMISSIONING);
        operator(2, WorkerState.WORKER_EXCLUDED);
        now += 10 * GRACE;
        assertEquals(0, check(t));
        assertEquals(WorkerState.WORKER_EXCLUDED, state(0));
        assertEquals(WorkerState.WORKER_DECOMMISSIONING, state(1));
        assertEquals(WorkerState.WORKER_EXCLUDED, state(2));
    }

    @Test
    void aNewLeaderTakesBackItsPredecessorsExclusionsAfterAFullGrace() {
        WorkerFailureTracker old = tracker(1);
        old.report("app-a", one(0), "x").join();
        assertEquals(WorkerState.WORKER_EXCLUDED, state(0));
        now += GRACE / 2;
        // The new leader knows from the log that the exclusion was automatic, not when it began.
        WorkerFailureTracker fresh = tracker(1);
        assertEquals(0, check(fresh));
        now += GRACE - 1;
        assertEquals(0, check(fresh));
        now += 1;
        assertEquals(1, check(fresh));
        assertEquals(WorkerState.WORKER_ACTIVE, state(0));
    }

    @Test
    void whoExcludedAWorkerSurvivesASnapshot() {
        tracker(1).report("app-a", one(1), "x").join();
        operator(2, WorkerState.WORKER_EXCLUDED);
        io.estuary.master.state.MasterStateMachine restored = new io.estuary.master.state.MasterStateMachine();
        restored.restore(log.stateMachine().snapshot());
        assertEquals(reason(1), restored.read(s -> s.workerStateReason(WorkerId.of(addr(1)))));
        assertEquals("admin API", restored.read(s -> s.workerStateReason(WorkerId.of(addr(2)))));
        assertArrayEquals(
                log.stateMachine().snapshot().toByteArray(), restored.snapshot().toByteArray());
    }

    @Test
    void aLostWorkerIsForgotten() {
        WorkerFailureTracker t = tracker(1);
        t.report("app-a", one(0), "x").join();
        log.submit(MasterCommand.newBuilder()
                        .setWorkerLost(WorkerLost.newBuilder().setWorker(addr(0)))
                        .build())
                .join();
        now += GRACE;
        assertEquals(0, check(t), "nothing to take back: the worker is gone");
        // It registers again: ACTIVE, as any new worker.
        log.submit(MasterCommand.newBuilder()
                        .setWorkerRegistered(WorkerRegistered.newBuilder()
                                .setWorker(WorkerInfo.newBuilder().setAddress(addr(0))))
                        .build())
                .join();
        assertEquals(WorkerState.WORKER_ACTIVE, state(0));
    }
}
