package io.estuary.worker.lifecycle;

import io.estuary.common.util.GuardedScheduledExecutor;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drains a worker before it stops for good. Once started, the worker reports DECOMMISSIONING to the master
 * ({@code announce}), which gives it no new slots; running shuffles keep pushing, committing and reading here. The
 * drain ends when the worker holds no shuffle any more (the master expired each one: unregistered, or its
 * application ended) or at the timeout, whichever comes first; then the worker is stopped gracefully by its owner.
 * Thread-safe; {@link #start()} is idempotent.
 */
public final class Decommission implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Decommission.class);

    private final Supplier<List<String>> heldShuffles;
    private final Runnable announce;
    private final long timeoutMs;
    private final long pollMs;
    private final CompletableFuture<Boolean> drained = new CompletableFuture<>();
    private final ScheduledExecutorService timer = new GuardedScheduledExecutor("worker-decommission");
    private boolean started;
    private final io.estuary.common.time.Clock clock;

    /** {@code announce} reports the new state to the master; it is called once, on this class's thread. */
    public Decommission(Supplier<List<String>> heldShuffles, Runnable announce, long timeoutMs, long pollMs) {
        this(heldShuffles, announce, timeoutMs, pollMs, io.estuary.common.time.Clock.system());
    }

    /** {@code clock} tells when the timeout has passed (polls still run every {@code pollMs} of real time). */
    public Decommission(
            Supplier<List<String>> heldShuffles,
            Runnable announce,
            long timeoutMs,
            long pollMs,
            io.estuary.common.time.Clock clock) {
        this.clock = clock;
        this.heldShuffles = heldShuffles;
        this.announce = announce;
        this.timeoutMs = timeoutMs;
        this.pollMs = pollMs;
    }

    /** Starts draining; the future completes with true once drained, false at the timeout. */
    public synchronized CompletableFuture<Boolean> start() {
        if (started) return drained;
        started = true;
        long deadline = clock.nanos() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        LOG.info("Decommissioning: no new slots; waiting up to {} ms for the shuffles held here to end", timeoutMs);
        timer.execute(announce);
        timer.scheduleWithFixedDelay(
                () -> {
                    List<String> held = heldShuffles.get();
                    if (held.isEmpty()) {
                        LOG.info("Decommissioning done: no shuffle left on this worker");
                        drained.complete(true);
                    } else if (clock.nanos() - deadline >= 0) {
                        LOG.warn("Decommission timed out with {} shuffles still held: {}", held.size(), held);
                        drained.complete(false);
                    }
                    if (drained.isDone()) timer.shutdown();
                },
                pollMs,
                pollMs,
                TimeUnit.MILLISECONDS);
        return drained;
    }

    public synchronized boolean started() {
        return started;
    }

    public CompletableFuture<Boolean> drained() {
        return drained;
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
