package io.estuary.common.util;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A fixed pool of named daemon threads ({@link NamedThreadFactory}) with an unbounded queue, for a server's
 * workers (flushers, disk readers, probes): a fatal error in a task {@link #submit}ted here reaches the fatal
 * handler instead of lying unread in its future (see {@link GuardedTask}); one thrown by a task passed to
 * {@link #execute} ends its thread, whose uncaught-exception handler halts a server. Thread-safe.
 */
public final class GuardedThreadPool extends ThreadPoolExecutor {
    private final Consumer<Throwable> onFatal;

    /** {@code threads} threads named {@code name-N}; a fatal error halts a server. */
    public GuardedThreadPool(String name, int threads) {
        this(name, threads, GuardedTask.HALT_ON_FATAL);
    }

    /** @param onFatal told every fatal error a submitted task ends with, on the task's thread (tests pass their own) */
    public GuardedThreadPool(String name, int threads, Consumer<Throwable> onFatal) {
        super(threads, threads, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), new NamedThreadFactory(name));
        this.onFatal = onFatal;
    }

    @Override
    protected void afterExecute(Runnable r, Throwable t) {
        super.afterExecute(r, t);
        GuardedTask.afterExecute(r, t, onFatal);
    }
}
