package io.estuary.client.retry;

import java.util.concurrent.ThreadLocalRandom;

/**
 * The waits between tries to reach a worker that could not be reached (typically restarting): 1 s, doubled after
 * each try up to 5 s, each drawn between half and all of it so that many clients do not come back in step; all
 * within a budget counted from the first failure since the last {@link #reset()}. The last wait is cut so that the
 * last try falls at the end of the budget. Not thread-safe: one per worker (or reader) and operation.
 */
public final class UnreachableBackoff {
    static final long FIRST_WAIT_MS = 1000;
    static final long MAX_WAIT_MS = 5000;

    private final long budgetMs;
    private long firstFailureMs = -1;
    private long nextWaitMs = FIRST_WAIT_MS;

    /** {@code budgetMs}: how long after the first failure to keep trying; 0 never waits. */
    public UnreachableBackoff(long budgetMs) {
        this.budgetMs = budgetMs;
    }

    /** After a failure at {@code nowMs}: how long to wait before the next try, or -1 once the budget is spent. */
    public long nextWait(long nowMs) {
        if (firstFailureMs < 0) firstFailureMs = nowMs;
        long left = firstFailureMs + budgetMs - nowMs;
        if (left <= 0) return -1;
        long wait = nextWaitMs / 2 + ThreadLocalRandom.current().nextLong(nextWaitMs / 2 + 1);
        nextWaitMs = Math.min(MAX_WAIT_MS, nextWaitMs * 2);
        return Math.min(wait, left);
    }

    /** The worker answered: a later failure starts a new budget. */
    public void reset() {
        firstFailureMs = -1;
        nextWaitMs = FIRST_WAIT_MS;
    }
}
