package io.estuary.common.util;

import static org.junit.jupiter.api.Assertions.*;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A fatal error inside an executor task reaches the fatal handler (and halts a server) instead of lying in the
 * task's future; a periodic task that throws anything else keeps its schedule.
 */
class GuardedExecutorsTest {
    private static final long WAIT_S = 10;

    @Test
    void fatalErrorInAScheduledTaskHaltsTheServer() throws Exception {
        CompletableFuture<Integer> halted = new CompletableFuture<>();
        GuardedScheduledExecutor timer = new GuardedScheduledExecutor("guarded-test");
        try (AutoCloseable halting = FatalErrors.haltingInto(halted::complete)) {
            timer.scheduleWithFixedDelay(
                    () -> {
                        throw new OutOfMemoryError("Java heap space");
                    },
                    0,
                    10,
                    TimeUnit.MILLISECONDS);
            assertEquals(FatalErrors.EXIT_STATUS, halted.get(WAIT_S, TimeUnit.SECONDS));
        } finally {
            timer.shutdownNow();
        }
    }

    @Test
    void fatalErrorInASubmittedTaskHaltsTheServer() throws Exception {
        CompletableFuture<Integer> halted = new CompletableFuture<>();
        GuardedThreadPool pool = new GuardedThreadPool("guarded-test-pool", 1);
        try (AutoCloseable halting = FatalErrors.haltingInto(halted::complete)) {
            Future<?> f = pool.submit(() -> {
                throw new StackOverflowError();
            });
            assertEquals(FatalErrors.EXIT_STATUS, halted.get(WAIT_S, TimeUnit.SECONDS));
            assertThrows(ExecutionException.class, () -> f.get(WAIT_S, TimeUnit.SECONDS), "the caller still sees it");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void onlyFatalErrorsReachTheHandler() throws Exception {
        CompletableFuture<Throwable> fatal = new CompletableFuture<>();
        GuardedScheduledExecutor timer = new GuardedScheduledExecutor("guarded-test", 1, fatal::complete);
        try {
            Future<?> notFatal = timer.submit(() -> {
                throw new OutOfMemoryError("Direct buffer memory"); // a refused allocation, not a broken JVM
            });
            assertThrows(ExecutionException.class, () -> notFatal.get(WAIT_S, TimeUnit.SECONDS));
            Future<?> assertion = timer.submit(() -> {
                throw new AssertionError("an Error, not the VM's");
            });
            assertThrows(ExecutionException.class, () -> assertion.get(WAIT_S, TimeUnit.SECONDS));
            timer.execute(() -> {
                throw new InternalError("the JVM is broken");
            });
            assertInstanceOf(InternalError.class, fatal.get(WAIT_S, TimeUnit.SECONDS));
        } finally {
            timer.shutdownNow();
        }
    }

    @Test
    void aPeriodicTaskThatThrowsKeepsRunning() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        CompletableFuture<Void> fifth = new CompletableFuture<>();
        GuardedScheduledExecutor timer = new GuardedScheduledExecutor("guarded-test", 1, e -> fail("not fatal: " + e));
        try {
            ScheduledFuture<?> periodic = timer.scheduleAtFixedRate(
                    () -> {
                        int n = runs.incrementAndGet();
                        if (n >= 5) fifth.complete(null);
                        if (n % 2 == 1) throw new IllegalStateException("run " + n + " fails");
                        throw new AssertionError("and so does run " + n);
                    },
                    0,
                    5,
                    TimeUnit.MILLISECONDS);
            fifth.get(WAIT_S, TimeUnit.SECONDS);
            assertFalse(periodic.isDone(), "a task that threw is still scheduled");
            AtomicInteger delayedRuns = new AtomicInteger();
            CompletableFuture<Void> third = new CompletableFuture<>();
            ScheduledFuture<?> delayed = timer.scheduleWithFixedDelay(
                    () -> {
                        if (delayedRuns.incrementAndGet() >= 3) third.complete(null);
                        throw new IllegalArgumentException("every run fails");
                    },
                    0,
                    5,
                    TimeUnit.MILLISECONDS);
            third.get(WAIT_S, TimeUnit.SECONDS);
            assertFalse(delayed.isDone());
        } finally {
            timer.shutdownNow();
        }
    }
}
