package io.estuary.client.write;

import io.estuary.common.util.EstuaryException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Bounds the bytes a map task has pushed but not yet seen acknowledged, and remembers the first failure. A push
 * stays in flight through all its retries until it finally succeeds or fails, so waiting for "nothing in flight"
 * really means every byte is acknowledged.
 */
final class PushTracker {
    private final int maxBytes;
    private final Semaphore permits;
    private volatile Throwable failure;

    PushTracker(long maxBytesInFlight) {
        this.maxBytes = (int) Math.min(Integer.MAX_VALUE, maxBytesInFlight);
        this.permits = new Semaphore(maxBytes);
    }

    private int permitsFor(int bytes) {
        return Math.max(1, Math.min(bytes, maxBytes));
    }

    void acquire(int bytes) {
        checkFailure();
        try {
            permits.acquire(permitsFor(bytes));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EstuaryException("interrupted while waiting to push", e);
        }
    }

    void succeeded(int bytes) {
        permits.release(permitsFor(bytes));
    }

    void failed(int bytes, Throwable cause) {
        recordFailure(cause);
        permits.release(permitsFor(bytes));
    }

    /** Remembers a failure without returning permits (they come back with the push's last part). */
    void recordFailure(Throwable cause) {
        if (failure == null) failure = cause;
    }

    /** Waits until every push is acknowledged, then throws the first failure, if any. */
    void awaitAll(long timeoutMs) {
        try {
            if (!permits.tryAcquire(maxBytes, timeoutMs, TimeUnit.MILLISECONDS)) {
                throw new EstuaryException("pushes not acknowledged within " + timeoutMs + " ms");
            }
            permits.release(maxBytes);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EstuaryException("interrupted while waiting for pushes", e);
        }
        checkFailure();
    }

    void checkFailure() {
        Throwable f = failure;
        if (f != null) throw new EstuaryException("a push failed: " + f.getMessage(), f);
    }
}
