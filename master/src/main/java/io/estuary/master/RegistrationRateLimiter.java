package io.estuary.master;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.time.Clock;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * How fast one client host may register applications: a token bucket per remote address, refilled at
 * {@code ratePerHost} per second up to {@code burstPerHost}. Registering is open to connections that proved no
 * identity, and each registration costs a Raft entry and a secret kept until the application expires, so an
 * unchecked client could grow every master's log and state at will. A host whose bucket has refilled is forgotten
 * (it is as if new), so the map holds only hosts that registered lately. Thread-safe.
 */
final class RegistrationRateLimiter {
    private final double perMs;
    private final double burst;
    private final Clock clock;
    private final Map<InetAddress, double[]> buckets = new HashMap<>(); // host -> {tokens, at ms}; guarded by this
    private long prunedAt; // guarded by this

    RegistrationRateLimiter(double perSecond, int burst, Clock clock) {
        this.perMs = perSecond / 1000;
        this.burst = burst;
        this.clock = clock;
        this.prunedAt = clock.millis();
    }

    static RegistrationRateLimiter fromConf(EstuaryConf conf, Clock clock) {
        return new RegistrationRateLimiter(
                conf.get(MasterConfig.REGISTRATION_RATE_PER_HOST),
                conf.get(MasterConfig.REGISTRATION_BURST_PER_HOST),
                clock);
    }

    /** Takes a token for a registration from {@code host}: false when its bucket is empty. */
    synchronized boolean tryAcquire(InetAddress host) {
        long now = clock.millis();
        if (now - prunedAt > refillMs()) prune(now);
        double[] b = buckets.computeIfAbsent(host, h -> new double[] {burst, now});
        b[0] = Math.min(burst, b[0] + (now - (long) b[1]) * perMs);
        b[1] = now;
        if (b[0] < 1) return false;
        b[0] -= 1;
        return true;
    }

    /** Hosts tracked now (a test's view of the bound). */
    synchronized int hosts() {
        return buckets.size();
    }

    /** How long an empty bucket takes to fill. */
    private long refillMs() {
        return (long) Math.ceil(burst / perMs);
    }

    private void prune(long now) {
        prunedAt = now;
        for (Iterator<double[]> it = buckets.values().iterator(); it.hasNext(); ) {
            double[] b = it.next();
            if (b[0] + (now - (long) b[1]) * perMs >= burst) it.remove();
        }
    }
}
