package io.estuary.common.util;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The scheduled executor for a server's timers: a periodic task that throws is logged and keeps its schedule, a
 * task passed to {@link #execute} that throws is logged, and a fatal error in any task (including one
 * {@link #submit}ted, whose caller may never read its future) reaches the fatal handler: see {@link GuardedTask}.
 * Threads are named daemons ({@link NamedThreadFactory}). Thread-safe.
 */
public final class GuardedScheduledExecutor extends ScheduledThreadPoolExecutor {
    private final Consumer<Throwable> onFatal;

    /** One thread named {@code name-0}; a fatal error halts a server ({@link GuardedTask#HALT_ON_FATAL}). */
    public GuardedScheduledExecutor(String name) {
        this(name, 1, GuardedTask.HALT_ON_FATAL);
    }

    /** @param onFatal told every fatal error a task ends with, on the task's thread (tests pass their own) */
    public GuardedScheduledExecutor(String name, int threads, Consumer<Throwable> onFatal) {
        super(threads, new NamedThreadFactory(name));
        this.onFatal = onFatal;
    }

    @Override
    public void execute(Runnable command) {
        super.execute(GuardedTask.oneShot(command));
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        return super.scheduleWithFixedDelay(GuardedTask.periodic(command), initialDelay, delay, unit);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        return super.scheduleAtFixedRate(GuardedTask.periodic(command), initialDelay, period, unit);
    }

    @Override
    protected void afterExecute(Runnable r, Throwable t) {
        super.afterExecute(r, t);
        GuardedTask.afterExecute(r, t, onFatal);
    }
}
