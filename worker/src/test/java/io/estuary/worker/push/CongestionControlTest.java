package io.estuary.worker.push;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.testing.ManualClock;
import io.estuary.worker.storage.MemoryTracker;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CongestionControlTest {
    /** Stands still: a slow machine cannot age the pushes out of the window between recording and evaluating. */
    private final ManualClock clock = new ManualClock();

    private static EstuaryConf conf() {
        // Evaluated by hand in these tests: the timer's evaluations only repeat the same decisions.
        return new EstuaryConf().set(WorkerConfig.CONGESTION_WINDOW, "2s");
    }

    @Test
    void aFixedCapPerApplicationAndPerUser() {
        MemoryTracker memory = new MemoryTracker(1L << 30);
        CongestionControl c = new CongestionControl(
                conf().set(WorkerConfig.CONGESTION_APP_MAX_RATE, "1m").set(WorkerConfig.CONGESTION_USER_MAX_RATE, "3m"),
                memory,
                clock);
        try {
            c.applicationUser("a", "alice");
            c.applicationUser("b", "bob");
            c.applicationUser("c", "bob");
            c.applicationUser("d", "bob");
            c.recordPush("a-1", 4 << 20); // 2 MiB/s over 2 s: above the application cap
            c.recordPush("b-1", 1 << 20); // bob's three applications: 0.5 + 0.5 + 0.75 MiB/s, each below the
            c.recordPush("c-1", 1 << 20); // application cap, together below his 3 MiB/s
            c.recordPush("d-1", (3 << 20) / 2);
            c.evaluate();
            assertEquals(Set.of("a"), c.congestedApplications());
            c.recordPush("d-1", 3 << 20); // bob now 6.5 MiB over 2 s: above his cap, so all his applications slow down
            c.evaluate();
            assertTrue(c.congested("b-7"));
            assertTrue(c.congested("c-1"));
            assertTrue(c.congested("d-1"));
            assertTrue(c.congested("a-1"));
        } finally {
            c.close();
        }
    }

    @Test
    void fairShareOnlyUnderLoadAndAgainstTheOthers() {
        MemoryTracker memory = new MemoryTracker(100 << 20);
        CongestionControl c = new CongestionControl(conf(), memory, clock);
        try {
            c.recordPush("flood-1", 100 << 20);
            c.recordPush("calm-1", 5 << 20);
            c.evaluate();
            assertTrue(c.congestedApplications().isEmpty(), "an idle worker lets everyone push");
            memory.add(80 << 20); // above the resume watermark: loaded
            c.evaluate();
            assertEquals(Set.of("flood"), c.congestedApplications(), "20x the other's rate is more than its share");
            memory.release(80 << 20);
            c.evaluate();
            assertTrue(c.congestedApplications().isEmpty(), "resumed once the load is gone");
        } finally {
            c.close();
        }
    }

    /**
     * Enforced: a congested application's pushes are paid for at the rate it is allowed (its cap, its part of its
     * user's cap, or its fair share), on one schedule its connections share, the debt capped; others are never held.
     */
    @Test
    void aCongestedApplicationIsHeldToItsAllowedRateWhateverItsClientDoes() {
        MemoryTracker memory = new MemoryTracker(1L << 30);
        CongestionControl c = new CongestionControl(
                conf().set(WorkerConfig.CONGESTION_APP_MAX_RATE, "1m")
                        .set(WorkerConfig.CONGESTION_USER_MAX_RATE, "2m")
                        .set(WorkerConfig.CONGESTION_MAX_HOLD, "3s"),
                memory,
                clock);
        try {
            c.applicationUser("flood", "alice");
            c.applicationUser("b", "bob");
            c.applicationUser("c", "bob");
            c.recordPush("flood-1", 8 << 20); // 4 MiB/s over 2 s: four times its cap
            c.recordPush("b-1", 3 << 20); // bob: 1.5 + 0.75 MiB/s; b alone passes the application cap too
            c.recordPush("c-1", (3 << 20) / 2);
            c.recordPush("calm-1", 1 << 19);
            c.evaluate();
            assertEquals(Set.of("flood", "b", "c"), c.congestedApplications());
            long ms = 1_000_000;
            // 512 KiB at 1 MiB/s: half a second each, on one schedule for all its connections, capped at 3 s.
            assertEquals(500 * ms, c.holdNanos("flood-1", 1 << 19));
            assertEquals(1000 * ms, c.holdNanos("flood-2", 1 << 19), "a second connection pays after the first");
            assertEquals(3000 * ms, c.holdNanos("flood-1", 8 << 20), "one hold is at most maxHold");
            clock.advanceMillis(2500);
            // The debt (capped at the larger of maxHold and the window: 3 s) is kept: 0.5 s of it left, and this push.
            assertEquals(1000 * ms, c.holdNanos("flood-1", 1 << 19), "what is left of the debt, and this push");
            // c's part of bob's 2 MiB/s cap: a third (it pushes a third of bob's bytes), 512 KiB in 0.75 s.
            assertEquals(750 * ms, c.holdNanos("c-1", 1 << 19), 2 * ms);
            assertEquals(0, c.holdNanos("calm-1", 10 << 20), "an application within bounds is never held");
        } finally {
            c.close();
        }
        CongestionControl advisory = new CongestionControl(
                conf().set(WorkerConfig.CONGESTION_APP_MAX_RATE, "1m").set(WorkerConfig.CONGESTION_ENFORCE, "false"),
                memory,
                clock);
        try {
            advisory.recordPush("flood-1", 8 << 20);
            advisory.evaluate();
            assertTrue(advisory.congested("flood-1"), "still told to slow down");
            assertEquals(0, advisory.holdNanos("flood-1", 1 << 20), "but not held");
        } finally {
            advisory.close();
        }
    }

    @Test
    void equalPushersAreNeverCongested() {
        MemoryTracker memory = new MemoryTracker(100 << 20);
        memory.add(90 << 20);
        CongestionControl c = new CongestionControl(conf(), memory, clock);
        try {
            for (String app : new String[] {"x", "y", "z"}) c.recordPush(app + "-0", 10 << 20);
            c.evaluate();
            assertTrue(c.congestedApplications().isEmpty());
        } finally {
            c.close();
        }
    }

    /** A worker lives through many applications: what it keeps per application goes once they have gone quiet. */
    @Test
    void whatIsKeptPerApplicationIsForgottenOnceItGoesQuiet() {
        CongestionControl c = new CongestionControl(conf(), new MemoryTracker(1L << 30), clock);
        try {
            long t = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(clock.nanos()); // the timer evaluates too, at t
            for (int i = 0; i < 10_000; i++) {
                c.applicationUser("app" + i, "user" + (i % 7), false, t);
                if (i % 2 == 0) c.recordPush("app" + i + "-0", 1_000, t);
            }
            c.applicationUser("busy", "carol", false, t);
            c.evaluate(t);
            assertEquals(10_001, c.applicationsTracked());
            // Ten minutes and more later, only the application still pushing is known, with its user.
            long later = t + new EstuaryConf().get(WorkerConfig.CONGESTION_FORGET_IDLE_APPLICATION) + 1;
            c.recordPush("busy-3", 1_000, later - 1_000);
            c.recordPush("busy-3", 1_000, later);
            c.evaluate(later);
            assertEquals(1, c.applicationsTracked());
        } finally {
            c.close();
        }
    }
}
