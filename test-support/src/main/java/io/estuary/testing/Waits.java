package io.estuary.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * The one way tests wait for something another thread or process does: poll a condition until it holds, fail with
 * a message naming it when it does not within a (generous) timeout. Timeouts are bounds for a hung system, never
 * what a test measures. Stateless.
 */
public final class Waits {
    /** What a test waits when it has no reason to choose: long enough for a loaded CI machine. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    private static final long POLL_MS = 10;

    private Waits() {}

    /** Waits until {@code condition} holds; throws {@link AssertionError} with {@code what} after {@code timeout}. */
    public static void waitFor(BooleanSupplier condition, Duration timeout, String what) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for: " + what);
            }
            Thread.sleep(POLL_MS);
        }
    }

    /** {@link #waitFor(BooleanSupplier, Duration, String)} with the timeout in milliseconds. */
    public static void waitFor(BooleanSupplier condition, long timeoutMs, String what) throws InterruptedException {
        waitFor(condition, Duration.ofMillis(timeoutMs), what);
    }

    /** {@link #waitFor(BooleanSupplier, Duration, String)} with {@link #DEFAULT_TIMEOUT}. */
    public static void waitFor(BooleanSupplier condition, String what) throws InterruptedException {
        waitFor(condition, DEFAULT_TIMEOUT, what);
    }

    /** As {@link #waitFor(BooleanSupplier, Duration, String)}, for callers that cannot throw a checked exception. */
    public static void waitUninterruptibly(BooleanSupplier condition, Duration timeout, String what) {
        try {
            waitFor(condition, timeout, what);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for: " + what, e);
        }
    }
}
