package io.estuary.master.state.raft;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts the connections a master's Raft port refused, and those it admitted without a proof in the permissive mode,
 * and logs each kind at WARN with the peer's address, at most once per interval (a peer hammering the port must not
 * flood the log); the count of those not logged goes with the next line. Thread-safe.
 */
public final class RaftAuthFailures {
    private static final Logger LOG = LoggerFactory.getLogger(RaftAuthFailures.class);
    private static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final Tally refused;
    private final Tally admitted;

    public RaftAuthFailures() {
        this(System::nanoTime);
    }

    RaftAuthFailures(LongSupplier nanoClock) {
        this.refused = new Tally(nanoClock, "Refused a connection to the Raft port from {}: {}{}", "refused");
        this.admitted = new Tally(
                nanoClock, "Admitted a connection to the Raft port from {} that proved no identity{}{}", "admitted");
    }

    /** Counts one refused connection and logs it unless another was logged within the interval. */
    void refused(Object peer, String why) {
        refused.add(peer, why);
    }

    /** Counts one connection admitted without a proof (estuary.auth.mode=permissive), logged as refusals are. */
    void admittedUnauthenticated(Object peer) {
        admitted.add(peer, " (estuary.auth.mode=permissive)");
    }

    /** Connections refused since this master started. */
    public long count() {
        return refused.count.get();
    }

    /** Connections admitted without a proof since this master started (permissive mode only). */
    public long admittedCount() {
        return admitted.count.get();
    }

    /** One kind of event: its count and its rate-limited WARN line. */
    private static final class Tally {
        private final LongSupplier nanoClock;
        private final String format;
        private final String verb;
        private final AtomicLong count = new AtomicLong();
        private final AtomicLong suppressed = new AtomicLong();
        private final AtomicLong nextLogNanos;

        Tally(LongSupplier nanoClock, String format, String verb) {
            this.nanoClock = nanoClock;
            this.format = format;
            this.verb = verb;
            this.nextLogNanos = new AtomicLong(nanoClock.getAsLong());
        }

        void add(Object peer, String why) {
            count.incrementAndGet();
            long now = nanoClock.getAsLong();
            long next = nextLogNanos.get();
            if (now - next >= 0 && nextLogNanos.compareAndSet(next, now + INTERVAL_NANOS)) {
                long others = suppressed.getAndSet(0);
                LOG.warn(
                        format,
                        peer,
                        why,
                        others == 0 ? "" : " (" + others + " more " + verb + " since the last such message)");
            } else {
                suppressed.incrementAndGet();
            }
        }
    }
}
