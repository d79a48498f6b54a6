package io.estuary.worker.storage;

import io.estuary.common.protocol.DiskStatus;
import io.estuary.common.util.GuardedScheduledExecutor;
import io.estuary.common.util.GuardedThreadPool;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Probes every disk on a timer and sets its state from what the probe finds: healthy, full (free space below the
 * reserve, or ENOSPC), slow (probe over the slow threshold) or failed (a disk error, or a probe that did not finish
 * within the timeout: a hung disk). A disk that probes healthy again is used again. Running out of file descriptors
 * says nothing about a disk and leaves its state alone.
 *
 * <p>Each disk is probed on a thread of its own, so a hung disk delays no other disk's probe, and never on the
 * flusher or reader threads. Every change of state is logged (WARN, or INFO on recovery) and reported to the
 * transition listener (the worker sends a heartbeat at once). Thread-safe.
 */
public final class DiskChecker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DiskChecker.class);

    private final List<Disk> disks;
    private final Function<Disk, DiskProbe.Outcome> prober;
    private final long intervalMs;
    private final long timeoutMs;
    private final ScheduledExecutorService timer = new GuardedScheduledExecutor("disk-checker");
    private final Map<Disk, ExecutorService> probeThreads = new LinkedHashMap<>();
    /** The probe running on each disk; guarded by this. */
    private final Map<Disk, Future<?>> running = new LinkedHashMap<>();

    private volatile Runnable onTransition = () -> {};

    /**
     * @param prober runs one probe of a disk (blocking); the real one is a {@link DiskProbe}, tests may pass another
     */
    public DiskChecker(List<Disk> disks, Function<Disk, DiskProbe.Outcome> prober, long intervalMs, long timeoutMs) {
        this.disks = new ArrayList<>(disks);
        this.prober = prober;
        this.intervalMs = intervalMs;
        this.timeoutMs = timeoutMs;
        for (Disk d : disks) {
            probeThreads.put(d, new GuardedThreadPool("disk-probe-" + d.dir().getName(), 1));
            d.onChange(() -> onTransition.run());
        }
    }

    /** Called after any disk changes state (from the thread that changed it; must not block). */
    public void onTransition(Runnable listener) {
        this.onTransition = listener;
    }

    /** Probes every disk once on the caller's thread (at startup), then every interval on the checker's threads. */
    public void start() {
        for (Disk d : disks) apply(d, prober.apply(d));
        timer.scheduleWithFixedDelay(this::probeAll, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
    }

    /** Starts a probe of every disk whose last probe has finished. */
    public void probeAll() {
        for (Disk d : disks) probe(d);
    }

    private synchronized void probe(Disk d) {
        Future<?> last = running.get(d);
        if (last != null && !last.isDone()) return; // still hung: its timeout already marked the disk failed
        Future<?> f;
        try {
            f = probeThreads.get(d).submit(() -> apply(d, prober.apply(d)));
        } catch (RejectedExecutionException closed) {
            return;
        }
        running.put(d, f);
        try {
            timer.schedule(
                    () -> {
                        if (!f.isDone()) {
                            apply(
                                    d,
                                    new DiskProbe.Outcome(
                                            DiskStatus.DISK_FAILED,
                                            0,
                                            timeoutMs * 1_000_000L,
                                            "the disk probe "
                                                    + "(write + fsync) did not finish within " + timeoutMs
                                                    + " ms (estuary.worker.disk.check.timeout): "
                                                    + "the disk hangs"));
                        }
                    },
                    timeoutMs,
                    TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closed) {
            // shutting down
        }
    }

    private void apply(Disk d, DiskProbe.Outcome o) {
        if (o.usableBytes > 0) d.usableBytes(o.usableBytes);
        if (o.status == null) {
            LOG.warn("Disk {}: {}; its state stays {}", d.mountPoint(), o.reason, d.status());
            return;
        }
        DiskStatus before = d.set(o.status, o.reason);
        if (before != o.status) logTransition(d, before, o.status, o.reason);
    }

    static void logTransition(Disk d, DiskStatus before, DiskStatus after, String why) {
        if (after == DiskStatus.DISK_HEALTHY) {
            LOG.info(
                    "Disk {} is healthy again (was {}): it takes new partitions again; {}",
                    d.mountPoint(),
                    before,
                    why);
        } else if (after == DiskStatus.DISK_FAILED) {
            LOG.warn(
                    "Disk {} FAILED (was {}): pushes to its partitions are refused (writers move elsewhere), partitions "
                            + "committed on it are reported lost; {}",
                    d.mountPoint(),
                    before,
                    why);
        } else {
            LOG.warn("Disk {} is {} (was {}): it gets no new partitions; {}", d.mountPoint(), after, before, why);
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
        for (ExecutorService e : probeThreads.values()) e.shutdownNow();
    }
}
