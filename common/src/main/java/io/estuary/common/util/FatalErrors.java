package io.estuary.common.util;

import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a server process does with an error that leaves the JVM unreliable (a {@link VirtualMachineError}: out of
 * heap, stack overflow, an internal error) on any of its threads: log it and halt, so a supervisor restarts a
 * whole process instead of it living on with dead threads. Off until {@link #haltOnFatalError()} turns it on, which
 * only the servers' {@code main} methods do: servers embedded in a test or a driver never halt their host JVM.
 *
 * <p>Running out of direct memory (Netty's or the JDK's buffer pools) is not fatal here: the heap and every thread
 * are fine, the caller refuses or retries the one allocation. Thread-safe.
 */
public final class FatalErrors {
    private static final Logger LOG = LoggerFactory.getLogger(FatalErrors.class);
    /** The exit status of a halted server: distinct, so a supervisor's log says why. */
    public static final int EXIT_STATUS = 70;

    private static volatile boolean halt;
    /** Ends the process with a status; a test swaps it ({@link #haltingInto}) to see a halt without one. */
    private static volatile IntConsumer halter = status -> Runtime.getRuntime().halt(status);

    /** Logs every throwable that ends a thread, then {@link #check}s it. Installed on every named thread. */
    public static final Thread.UncaughtExceptionHandler UNCAUGHT = (thread, e) -> {
        try {
            LOG.error("Uncaught error on thread {}", thread.getName(), e);
        } catch (Throwable ignored) {
            // logging itself failed (likely out of memory): still decide below
        }
        check(e);
    };

    private FatalErrors() {}

    /** From now on a fatal error on any thread halts the process; also the default for threads not made by us. */
    public static void haltOnFatalError() {
        halt = true;
        Thread.setDefaultUncaughtExceptionHandler(UNCAUGHT);
    }

    public static boolean halting() {
        return halt;
    }

    /**
     * Tests only: turns halting on with {@code fake} in place of {@link Runtime#halt} (the default uncaught-exception
     * handler stays as it was); closing the result turns both back.
     */
    static AutoCloseable haltingInto(IntConsumer fake) {
        boolean wasHalting = halt;
        IntConsumer was = halter;
        halter = fake;
        halt = true;
        return () -> {
            halt = wasHalting;
            halter = was;
        };
    }

    /**
     * Halts the process when {@code e} (or a cause) is fatal and halting is on; otherwise returns. Call it wherever
     * a server catches a {@link Throwable} it would otherwise only log.
     */
    public static void check(Throwable e) {
        if (!halt || !isFatal(e)) return;
        try {
            System.err.println(
                    "FATAL: " + e + " on thread " + Thread.currentThread().getName() + "; halting");
            LOG.error(
                    "Fatal error on thread {}: halting the process (exit status {})",
                    Thread.currentThread().getName(),
                    EXIT_STATUS,
                    e);
        } catch (Throwable ignored) {
            // halt regardless
        } finally {
            halter.accept(EXIT_STATUS);
        }
    }

    /** A virtual machine error other than a refused direct-memory allocation, itself or as a cause. */
    public static boolean isFatal(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof VirtualMachineError && !isDirectMemory(c)) return true;
        }
        return false;
    }

    private static boolean isDirectMemory(Throwable e) {
        if (!(e instanceof OutOfMemoryError)) return false;
        // Netty's io.netty.util.internal.OutOfDirectMemoryError (relocated in the shaded client), or the JDK's.
        String message = String.valueOf(e.getMessage());
        return e.getClass().getSimpleName().equals("OutOfDirectMemoryError")
                || message.contains("Direct buffer memory")
                || message.contains("direct buffer memory");
    }
}
