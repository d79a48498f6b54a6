package io.estuary.testing;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class WaitsTest {
    @Test
    void returnsOnceTheConditionHolds() throws InterruptedException {
        AtomicInteger polls = new AtomicInteger();
        Waits.waitFor(() -> polls.incrementAndGet() >= 3, Duration.ofSeconds(30), "three polls");
        assertEquals(3, polls.get());
    }

    @Test
    void failsNamingWhatItWaitedFor() {
        AssertionError e =
                assertThrows(AssertionError.class, () -> Waits.waitFor(() -> false, Duration.ofMillis(30), "the moon"));
        assertTrue(e.getMessage().contains("the moon"), e.getMessage());
    }
}
