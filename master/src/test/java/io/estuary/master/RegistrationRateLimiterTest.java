package io.estuary.master;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.testing.ManualClock;
import java.net.InetAddress;
import org.junit.jupiter.api.Test;

class RegistrationRateLimiterTest {
    private static InetAddress host(int i) throws Exception {
        return InetAddress.getByAddress(new byte[] {10, 0, (byte) (i >> 8), (byte) i});
    }

    @Test
    void aHostGetsItsBurstThenItsRateAndOtherHostsTheirOwn() throws Exception {
        ManualClock clock = new ManualClock();
        RegistrationRateLimiter l = new RegistrationRateLimiter(2, 3, clock);
        for (int i = 0; i < 3; i++) assertTrue(l.tryAcquire(host(1)), "registration " + i + " of the burst");
        assertFalse(l.tryAcquire(host(1)), "past the burst");
        assertTrue(l.tryAcquire(host(2)), "another host has its own bucket");
        clock.advanceMillis(499);
        assertFalse(l.tryAcquire(host(1)), "2 per second: not yet half a second");
        clock.advanceMillis(1);
        assertTrue(l.tryAcquire(host(1)), "one token after half a second");
        assertFalse(l.tryAcquire(host(1)));
        clock.advanceMillis(60_000);
        for (int i = 0; i < 3; i++) assertTrue(l.tryAcquire(host(1)), "refilled to the burst, not beyond");
        assertFalse(l.tryAcquire(host(1)));
    }

    @Test
    void hostsWhoseBucketRefilledAreForgotten() throws Exception {
        ManualClock clock = new ManualClock();
        RegistrationRateLimiter l = new RegistrationRateLimiter(10, 5, clock);
        for (int i = 0; i < 1000; i++) assertTrue(l.tryAcquire(host(i)));
        assertEquals(1000, l.hosts());
        clock.advanceMillis(1000); // 5 tokens at 10 per second: full after 500 ms
        assertTrue(l.tryAcquire(host(5000)));
        assertEquals(1, l.hosts(), "only the host seen since");
    }
}
