package io.estuary.common.util;

import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the guarded executors ({@link GuardedScheduledExecutor}, {@link GuardedThreadPool}) do around a task: a
 * periodic or fire-and-forget task that throws is logged and, when periodic, runs again next period (an executor
 * silently cancels a periodic task that throws, for good); a fatal error ({@link FatalErrors#isFatal}) a task
 * ends with is handed to the executor's fatal handler, which in a server halts the process, instead of lying
 * unread in the task's {@link Future}. Stateless; safe from any thread.
 */
public final class GuardedTask {
    private static final Logger LOG = LoggerFactory.getLogger(GuardedTask.class);

    /** The fatal handler of a server's executors: log, then {@link FatalErrors#check} (halts when halting is on). */
    public static final Consumer<Throwable> HALT_ON_FATAL = e -> {
        try {
            LOG.error(
                    "Fatal error in a task on thread {}", Thread.currentThread().getName(), e);
        } catch (Throwable ignored) {
            // logging failed (likely out of memory): still decide below
        }
        FatalErrors.check(e);
    };

    private GuardedTask() {}

    /**
     * {@code task} for running again and again: whatever it throws short of a fatal error is logged and swallowed,
     * so the next period still comes; a fatal error propagates (and ends the task).
     */
    static Runnable periodic(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (Throwable e) {
                if (FatalErrors.isFatal(e)) throw e;
                LOG.warn(
                        "A periodic task on thread {} failed; it runs again next period",
                        Thread.currentThread().getName(),
                        e);
            }
        };
    }

    /** {@code task} run once with no one to read its outcome: a failure short of a fatal error is logged. */
    static Runnable oneShot(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (Throwable e) {
                if (FatalErrors.isFatal(e)) throw e;
                LOG.warn("A task on thread {} failed", Thread.currentThread().getName(), e);
            }
        };
    }

    /**
     * From an executor's {@code afterExecute}: hands the fatal error a {@link Future} task ended with to
     * {@code onFatal}. A throwable thrown past the executor ({@code thrown} non-null) ends the thread instead, and
     * its uncaught-exception handler sees it ({@link NamedThreadFactory}).
     */
    static void afterExecute(Runnable r, Throwable thrown, Consumer<Throwable> onFatal) {
        if (thrown != null || !(r instanceof Future) || !((Future<?>) r).isDone()) return;
        Throwable failure;
        try {
            ((Future<?>) r).get();
            return;
        } catch (ExecutionException e) {
            failure = e.getCause();
        } catch (CancellationException e) {
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        if (failure != null && FatalErrors.isFatal(failure)) onFatal.accept(failure);
    }
}
