package io.estuary.common.util;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Daemon threads named {@code prefix-N}, so a thread dump says which pool a thread belongs to. An error that ends
 * one is logged, and halts a server process on a fatal error (see {@link FatalErrors}).
 */
public final class NamedThreadFactory implements ThreadFactory {
    private final String prefix;
    private final AtomicInteger next = new AtomicInteger();

    public NamedThreadFactory(String prefix) {
        this.prefix = prefix;
    }

    @Override
    public Thread newThread(Runnable r) {
        Thread t = new Thread(r, prefix + "-" + next.getAndIncrement());
        t.setDaemon(true);
        t.setUncaughtExceptionHandler(FatalErrors.UNCAUGHT);
        return t;
    }
}
