package io.estuary.worker.lifecycle;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.testing.ManualClock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The gate's shutdown wait: ended by the last push leaving, or by the deadline on the gate's clock. */
class PushGateTest {
    @Test
    void aClosedGateLetsNothingInAndItsWaitEndsWhenTheLastPushLeaves() throws Exception {
        ManualClock clock = new ManualClock();
        PushGate gate = new PushGate(clock);
        assertTrue(gate.tryEnter());
        gate.close();
        assertFalse(gate.tryEnter(), "closed: no push gets in");
        assertFalse(gate.isOpen());
        CompletableFuture<Boolean> idle = CompletableFuture.supplyAsync(() -> {
            try {
                return gate.awaitIdle(clock.nanos() + TimeUnit.HOURS.toNanos(1));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        gate.exit();
        assertTrue(idle.get(60, TimeUnit.SECONDS), "idle once the push let in has left");
    }

    @Test
    void theWaitEndsFalseAtTheDeadlineOnTheClock() throws Exception {
        ManualClock clock = new ManualClock();
        PushGate gate = new PushGate(clock);
        assertTrue(gate.tryEnter());
        gate.close();
        long deadline = clock.nanos() + TimeUnit.SECONDS.toNanos(30);
        clock.advance(java.time.Duration.ofSeconds(30));
        assertFalse(gate.awaitIdle(deadline), "a push still appending at the deadline");
        gate.exit();
        assertTrue(gate.awaitIdle(deadline), "none inside: idle even past the deadline");
    }
}
