package io.estuary.worker.lifecycle;

import io.estuary.common.time.Clock;
import io.estuary.worker.partition.PartitionRegistry;
import io.estuary.worker.storage.CommittedFile;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first part of a graceful stop (SIGTERM), before the servers close. In order:
 * <ol>
 *   <li>close the {@link PushGate}: pushes are refused with {@code HARD_SPLIT}, so writers move their partitions
 *       to new epochs elsewhere without blaming this worker; reservations are refused;</li>
 *   <li>tell the master ({@code announce}: a heartbeat saying SHUTTING_DOWN), so it places nothing here;</li>
 *   <li>wait for pushes already let in to finish appending;</li>
 *   <li>commit every open location (flush and close its file). Each committed file is recorded in the metadata
 *       store by the registry's listener, so the restarted worker serves it and answers the driver's stage-end
 *       commit for it as committed. Every byte acknowledged to a client is in one of these files (or was committed
 *       before), so a graceful restart loses nothing acknowledged; a location whose commit fails (disk error) or
 *       does not finish in time is unknown after the restart, and its replica (or a stage rerun) stands in.</li>
 *   <li>write the copies held in memory to their files (replicas, see {@code estuary.worker.replica.holdInMemory};
 *       primaries whose write is under way, see {@code estuary.worker.commit.fromMemory}): their commits are
 *       recorded, so the restarted worker serves them; one not written in time is found missing at the restart,
 *       reported lost, and read from its other copy.</li>
 * </ol>
 * Everything is bounded by one deadline, read on the worker's {@link Clock}. Runs once, on the stopping thread.
 */
public final class GracefulShutdown {
    private static final Logger LOG = LoggerFactory.getLogger(GracefulShutdown.class);

    private final PushGate gate;
    private final PartitionRegistry registry;
    private final LongPredicate announce;
    private final Clock clock;

    /** {@code announce} tells the master within the given milliseconds and says whether it answered. */
    public GracefulShutdown(PushGate gate, PartitionRegistry registry, LongPredicate announce, Clock clock) {
        this.gate = gate;
        this.registry = registry;
        this.announce = announce;
        this.clock = clock;
    }

    /** What a stop did. */
    public static final class Result {
        public final int committed;
        public final int failed;
        public final boolean timedOut;

        Result(int committed, int failed, boolean timedOut) {
            this.committed = committed;
            this.failed = failed;
            this.timedOut = timedOut;
        }

        @Override
        public String toString() {
            return committed + " open locations committed, " + failed + " failed" + (timedOut ? ", timed out" : "");
        }
    }

    /** Stops within {@code timeoutMs} from now. */
    public Result run(long timeoutMs) {
        long t0 = clock.nanos();
        long deadlineNanos = t0 + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        gate.close();
        if (!announce.test(Math.max(1, Math.min(5_000, timeoutMs)))) {
            LOG.warn(
                    "Could not tell the master that this worker is stopping; it places nothing here once it misses us");
        }
        boolean timedOut = false;
        try {
            if (!gate.awaitIdle(deadlineNanos)) {
                LOG.warn("Pushes still appending at the shutdown deadline");
                timedOut = true;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(0, 0, true);
        }
        List<PartitionRegistry.OpenSlot> open = registry.openSlots();
        AtomicInteger committed = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        List<CompletableFuture<?>> commits = new ArrayList<>(open.size());
        for (PartitionRegistry.OpenSlot s : open) {
            commits.add(s.writer.commit().handle((CommittedFile f, Throwable e) -> {
                if (e != null) {
                    failed.incrementAndGet();
                    LOG.warn("Committing {} at shutdown failed: {}", s.writer, e.getMessage());
                } else {
                    registry.committed(s.shuffleKey, s.partitionId, s.epoch, f);
                    committed.incrementAndGet();
                }
                return null;
            }));
        }
        try {
            CompletableFuture.allOf(commits.toArray(new CompletableFuture[0]))
                    .get(
                            Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - clock.nanos())),
                            TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            timedOut = true;
        } catch (ExecutionException e) {
            // each failure is counted above
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            timedOut = true;
        }
        try {
            registry.writeHeldCopies()
                    .get(
                            Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - clock.nanos())),
                            TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            LOG.warn("Copies held in memory still being written at the shutdown deadline");
            timedOut = true;
        } catch (ExecutionException e) {
            // never: each write's failure is its own, logged by the cache
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            timedOut = true;
        }
        Result r = new Result(committed.get(), failed.get(), timedOut);
        LOG.info("Graceful stop: {} in {} ms", r, TimeUnit.NANOSECONDS.toMillis(clock.nanos() - t0));
        return r;
    }
}
