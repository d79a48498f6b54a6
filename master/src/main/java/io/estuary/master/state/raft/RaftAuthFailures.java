package io.estuary.master.state.raft;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts the connections a master's Raft port refused and logs them at WARN with the peer's address, at most once
 * per interval (a peer hammering the port must not flood the log); the count of those not logged goes with the next
 * line. Thread-safe.
 */
public final class RaftAuthFailures {
    private static final Logger LOG = LoggerFactory.getLogger(RaftAuthFailures.class);
    private static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final AtomicLong count = new AtomicLong();
    private final AtomicLong suppressed = new AtomicLong();
    private final AtomicLong nextLogNanos;
    private final LongSupplier nanoClock;

    public RaftAuthFailures() {
        this(System::nanoTime);
    }

    RaftAuthFailures(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
        this.nextLogNanos = new AtomicLong(nanoClock.getAsLong());
    }

    /** Counts one refused connection and logs it unless another was logged within the interval. */
    void refused(Object peer, String why) {
        count.incrementAndGet();
        long now = nanoClock.getAsLong();
        long next = nextLogNanos.get();
        if (now - next >= 0 && nextLogNanos.compareAndSet(next, now + INTERVAL_NANOS)) {
            long others = suppressed.getAndSet(0);
            LOG.warn(
                    "Refused a connection to the Raft port from {}: {}{}",
                    peer,
                    why,
                    others == 0 ? "" : " (" + others + " more refused since the last such message)");
        } else {
            suppressed.incrementAndGet();
        }
    }

    /** Connections refused since this master started. */
    public long count() {
        return count.get();
    }
}
