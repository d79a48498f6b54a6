package io.estuary.worker.admin;

import io.estuary.common.time.Clock;
import io.estuary.common.util.GuardedScheduledExecutor;
import java.io.Closeable;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Hang detection: hands each watched executor (a disk's flusher, a Netty event loop) a no-op probe and reports the
 * executors whose probe has waited longer than the stall timeout. An executor has at most one probe outstanding, so a
 * stuck one is not flooded; its probe's age is how long it has made no progress. A rejected probe (the executor shut
 * down) does not count as a stall.
 *
 * <p>Thread-safe: {@link #watch} and {@link #stalled} may be called from any thread; probes run on the detector's
 * own thread once {@link #start}ed, or from the caller of {@link #probe}.
 */
public final class StallDetector implements Closeable {
    private static final long NONE = Long.MIN_VALUE;

    /** One watched executor and the time its outstanding probe was handed over (NONE when none is). */
    private static final class Target {
        final String name;
        final Executor executor;
        final AtomicLong probeSince = new AtomicLong(NONE);

        Target(String name, Executor executor) {
            this.name = name;
            this.executor = executor;
        }
    }

    private final long timeoutNanos;
    private final Clock clock;
    private final List<Target> targets = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService ticker = new GuardedScheduledExecutor("worker-stall-detector");

    public StallDetector(long stallTimeoutMs) {
        this(stallTimeoutMs, Clock.system());
    }

    /** {@code clock} measures how long a probe has waited. */
    public StallDetector(long stallTimeoutMs, Clock clock) {
        this.clock = clock;
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(stallTimeoutMs);
    }

    /** Watches {@code executor}; {@code name} is what {@link #stalled} reports. */
    public void watch(String name, Executor executor) {
        targets.add(new Target(name, executor));
    }

    /** Probes every watched executor every {@code intervalMs}. */
    public void start(long intervalMs) {
        ticker.scheduleWithFixedDelay(this::probe, 0, intervalMs, TimeUnit.MILLISECONDS);
    }

    /** Hands a probe to every watched executor that has none outstanding. */
    public void probe() {
        for (Target t : targets) {
            long now = clock.nanos();
            if (!t.probeSince.compareAndSet(NONE, now)) continue;
            try {
                t.executor.execute(() -> t.probeSince.set(NONE));
            } catch (RejectedExecutionException e) {
                t.probeSince.set(NONE); // shutting down: not a stall
            }
        }
    }

    /** The watched executors whose probe has waited longer than the timeout, each with how long, e.g. "x (31 s)". */
    public List<String> stalled() {
        List<String> out = new ArrayList<>();
        long now = clock.nanos();
        for (Target t : targets) {
            long since = t.probeSince.get();
            if (since != NONE && now - since > timeoutNanos) {
                out.add(t.name + " (no progress for " + TimeUnit.NANOSECONDS.toSeconds(now - since) + " s)");
            }
        }
        return out;
    }

    /** How many executors are watched. */
    public int watched() {
        return targets.size();
    }

    @Override
    public void close() {
        ticker.shutdownNow();
    }
}
