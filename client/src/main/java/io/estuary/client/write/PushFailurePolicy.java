package io.estuary.client.write;

import static io.estuary.client.write.PushFailureAction.BACK_OFF;
import static io.estuary.client.write.PushFailureAction.GIVE_UP;
import static io.estuary.client.write.PushFailureAction.RESEND;
import static io.estuary.client.write.PushFailureAction.RESEND_AFTER_BACK_OFF;
import static io.estuary.client.write.PushFailureAction.REVIVE;
import static io.estuary.client.write.PushFailureAction.SPLIT;
import static io.estuary.client.write.PushFailureAction.STAGE_ENDED;

import io.estuary.common.status.StatusCode;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The one place that decides what a writer does when a push fails: a table from the failure's {@link StatusCode}
 * to a {@link PushFailureAction}, the bound on tries, and the back-off between them. The table has two columns: what
 * a single push does, and what each part of a failed merged push does once the merged push was split.
 *
 * <p>A push whose stage ended settles quietly whatever else holds; otherwise an aborted task, a code that is not
 * retryable or a push out of tries gives up; a merged push that may be retried is split, unless the refusal speaks
 * of the whole worker ({@link #staysWhole}); a single push takes its row. Immutable and thread-safe (the back-off
 * draws from {@link ThreadLocalRandom}).
 */
public final class PushFailurePolicy {
    /** The longest wait between two tries of a push. */
    static final long MAX_BACKOFF_MS = 10_000;

    private static final Map<StatusCode, PushFailureAction[]> TABLE = new EnumMap<>(StatusCode.class);

    static {
        //  status                        a single push  a part of a split merged push
        row(StatusCode.OK, GIVE_UP, GIVE_UP); // never a failure: a peer that says so is broken
        row(StatusCode.RETRY_LATER, BACK_OFF, RESEND_AFTER_BACK_OFF); // the worker was briefly busy
        row(StatusCode.SOFT_SPLIT, BACK_OFF, BACK_OFF);
        row(StatusCode.HARD_SPLIT, REVIVE, RESEND); // only some partitions may be full
        row(StatusCode.STAGE_ENDED, STAGE_ENDED, STAGE_ENDED);
        row(StatusCode.UNKNOWN_LOCATION, REVIVE, REVIVE);
        row(StatusCode.DISK_FAILED, REVIVE, RESEND); // only some partitions may be on the failed disk
        row(StatusCode.REPLICATE_FAILED, REVIVE, RESEND); // only some partitions may have a failed replica
        row(StatusCode.NOT_LEADER, BACK_OFF, BACK_OFF);
        row(StatusCode.UNKNOWN_SHUFFLE, GIVE_UP, GIVE_UP);
        row(StatusCode.SHUFFLE_DATA_LOST, GIVE_UP, GIVE_UP);
        row(StatusCode.BAD_REQUEST, GIVE_UP, GIVE_UP);
        row(StatusCode.CONNECTION_FAILED, REVIVE, REVIVE);
        row(StatusCode.FATAL, GIVE_UP, GIVE_UP);
        row(StatusCode.CONGESTED, BACK_OFF, BACK_OFF);
        row(StatusCode.VERSION_MISMATCH, GIVE_UP, GIVE_UP);
        row(StatusCode.UNKNOWN_STREAM, BACK_OFF, BACK_OFF);
        row(StatusCode.STALE_ATTEMPT, GIVE_UP, GIVE_UP);
        row(StatusCode.UNAUTHENTICATED, GIVE_UP, GIVE_UP); // the same credentials fail the same way again
        row(StatusCode.FORBIDDEN, GIVE_UP, GIVE_UP);
        row(StatusCode.QUOTA_EXCEEDED, GIVE_UP, GIVE_UP);
        row(StatusCode.ADMISSION_WAIT, BACK_OFF, RESEND_AFTER_BACK_OFF); // a registration's, never a push's
    }

    private static void row(StatusCode status, PushFailureAction single, PushFailureAction splitPart) {
        TABLE.put(status, new PushFailureAction[] {single, splitPart});
    }

    private final int retries;
    private final long retryWaitMs;

    /**
     * @param retries how often a push is tried again before it gives up
     * @param retryWaitMs the first back-off; it doubles with each try, up to {@link #MAX_BACKOFF_MS}
     */
    public PushFailurePolicy(int retries, long retryWaitMs) {
        this.retries = retries;
        this.retryWaitMs = retryWaitMs;
    }

    public int retries() {
        return retries;
    }

    /** What a single push does after a failure with {@code status}, while it has tries left. */
    public static PushFailureAction forSingle(StatusCode status) {
        PushFailureAction[] row = TABLE.get(status);
        return row == null ? GIVE_UP : row[0];
    }

    /** What each part of a merged push that failed with {@code status} does once the push was split. */
    public static PushFailureAction forSplitPart(StatusCode status) {
        PushFailureAction[] row = TABLE.get(status);
        return row == null ? GIVE_UP : row[1];
    }

    /**
     * What to do with a push that failed with {@code status} on try {@code attempt} (0 for the first).
     *
     * @param merged whether the push carries several partitions
     * @param aborted whether the task was aborted (then nothing is tried again)
     */
    public PushFailureAction onFailure(StatusCode status, int attempt, boolean merged, boolean aborted) {
        PushFailureAction single = forSingle(status);
        if (single == STAGE_ENDED) return STAGE_ENDED;
        if (aborted || single == GIVE_UP || attempt >= retries) return GIVE_UP;
        if (!merged) return single;
        return staysWhole(status) ? BACK_OFF : SPLIT;
    }

    /**
     * Whether a merged push that failed with {@code status} is tried again whole after a back-off instead of split:
     * the status speaks of the worker (busy, out of memory, congested), not of any one partition, so every part would
     * meet it again. Splitting then would turn one refused push into thousands of single pushes, each a frame and a
     * round trip, at the very moment the worker is short of memory.
     */
    public static boolean staysWhole(StatusCode status) {
        return status == StatusCode.RETRY_LATER
                || status == StatusCode.CONGESTED
                || status == StatusCode.ADMISSION_WAIT;
    }

    /**
     * After a revive the driver could not answer: the stage ended (another attempt of this map ended first), or the
     * push waits like a busy worker and is then handled again as a new try.
     */
    public static PushFailureAction onReviveFailure(StatusCode status) {
        return status == StatusCode.STAGE_ENDED ? STAGE_ENDED : BACK_OFF;
    }

    /**
     * Whether a revive after {@code status} names the push's worker as failed. Only a worker this client could not
     * reach is blamed: a primary that could not replicate does not say which replica failed, and a dead replica shows
     * itself when the driver reserves the new epoch's copies on it.
     */
    public static boolean blamesWorker(StatusCode status) {
        return status == StatusCode.CONNECTION_FAILED;
    }

    /** Exponential back-off with jitter: between half and all of retryWait * 2^attempt, at most 10 s. */
    public long backoff(int attempt) {
        long full = Math.min(MAX_BACKOFF_MS, retryWaitMs << Math.min(attempt, 20));
        return full / 2 + ThreadLocalRandom.current().nextLong(full / 2 + 1);
    }

    /**
     * How long a task waits for its pushes at the end: every try may take {@code pushTimeoutMs} and each retry may
     * first wait the longest back-off.
     */
    public long settleTimeoutMs(long pushTimeoutMs) {
        return pushTimeoutMs * (retries + 2) + MAX_BACKOFF_MS * retries;
    }
}
