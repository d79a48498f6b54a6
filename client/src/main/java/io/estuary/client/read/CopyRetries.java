package io.estuary.client.read;

import io.estuary.client.retry.UnreachableBackoff;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.status.StatusCode;
import io.estuary.common.time.Clock;

/**
 * What becomes of a copy of an epoch whose read failed (see {@link ShuffleBatchReader}'s class doc): opened again at
 * once, put aside to be tried again after a wait, or given up. Keeps the budgets: failures after the worker answered
 * per copy ({@code retriesPerCopy}) and per partition ({@code retriesPerPartition}) over the whole read; failures to
 * reach workers by the unreachable timeout, counted from the first since a chunk was received.
 *
 * <p>Confined to the reader's thread.
 */
final class CopyRetries {
    private final int retriesPerCopy;
    private final int retriesPerPartition;
    private final Clock clock;
    /** Waits before trying failed copies again; reset whenever a chunk arrives. */
    private final UnreachableBackoff unreachableWait;

    CopyRetries(EstuaryConf conf, Clock clock) {
        this.retriesPerCopy = conf.get(ClientConfig.FETCH_RETRIES_PER_COPY);
        this.retriesPerPartition = conf.get(ClientConfig.FETCH_RETRIES_PER_PARTITION);
        this.clock = clock;
        this.unreachableWait = new UnreachableBackoff(conf.get(ClientConfig.FETCH_UNREACHABLE_TIMEOUT));
    }

    /** A chunk arrived: the unreachable timeout counts again from the next failure. */
    void chunkReceived() {
        unreachableWait.reset();
    }

    /**
     * Whether the failed stream was only dropped on its worker (the stream, or its idle connection) while the task
     * was busy elsewhere, after chunks came in since it was opened: nothing is lost, the copy is opened again at once
     * where it stopped, without counting. A worker that died meanwhile fails the reopen, which counts as usual.
     */
    static boolean droppedWhileAway(StatusCode status, boolean progressed, boolean closedWhileAway) {
        return progressed
                && (status == StatusCode.UNKNOWN_STREAM || (status == StatusCode.CONNECTION_FAILED && closedWhileAway));
    }

    /**
     * Counts a failure of {@code copy}, already taken off the epoch's copies ({@code afterOpen}: its worker had
     * answered; {@code stoppedAt}: the chunk it stopped at). A failure that may pass puts the copy aside to be tried
     * again, unless it used up a budget; anything else gives it up.
     *
     * @return why a failure that may pass gave the copy up (a budget is used up), or null
     */
    String failed(EpochRead epoch, EpochRead.CopyRead copy, StatusCode status, boolean afterOpen, int stoppedAt) {
        if (status != StatusCode.CONNECTION_FAILED
                && status != StatusCode.RETRY_LATER
                && status != StatusCode.UNKNOWN_STREAM) {
            return null;
        }
        String givenUp = null;
        if (afterOpen) {
            copy.failures++;
            epoch.counts.failures++;
            copy.resumeChunk = stoppedAt;
            if (copy.failures > retriesPerCopy) {
                givenUp = "it failed " + copy.failures + " times, more than "
                        + ClientConfig.FETCH_RETRIES_PER_COPY.key() + " (" + retriesPerCopy + ") allows";
            } else if (epoch.counts.failures > retriesPerPartition) {
                givenUp = "partition " + epoch.partition + " failed " + epoch.counts.failures + " times, more than "
                        + ClientConfig.FETCH_RETRIES_PER_PARTITION.key() + " (" + retriesPerPartition + ") allows";
            }
        }
        if (givenUp == null) epoch.retry.add(copy);
        return givenUp;
    }

    /**
     * Once none of the epoch's copies is left to try: how long to wait before trying those put aside again, or -1
     * when none is put aside or they kept failing for the unreachable timeout.
     */
    long nextWait(EpochRead epoch) {
        return epoch.retry.isEmpty() ? -1 : unreachableWait.nextWait(clock.millis());
    }

    /** Why an epoch is lost when {@link #nextWait} gave up on it ({@code givenUp}: from the last {@link #failed}). */
    static String whyLost(EpochRead epoch, String givenUp) {
        if (givenUp != null) return "; " + givenUp;
        if (epoch.retry.isEmpty()) return "";
        return "; the copies left kept failing for " + ClientConfig.FETCH_UNREACHABLE_TIMEOUT.key()
                + " without a chunk received";
    }
}
