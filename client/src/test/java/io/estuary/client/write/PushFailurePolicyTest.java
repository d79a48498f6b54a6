package io.estuary.client.write;

import static io.estuary.client.write.PushFailureAction.BACK_OFF;
import static io.estuary.client.write.PushFailureAction.GIVE_UP;
import static io.estuary.client.write.PushFailureAction.RESEND;
import static io.estuary.client.write.PushFailureAction.RESEND_AFTER_BACK_OFF;
import static io.estuary.client.write.PushFailureAction.REVIVE;
import static io.estuary.client.write.PushFailureAction.SPLIT;
import static io.estuary.client.write.PushFailureAction.STAGE_ENDED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.common.status.StatusCode;
import java.util.EnumMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The push failure table, walked code by code, and the bounds on tries and back-off; no cluster needed. */
class PushFailurePolicyTest {
    private static final int RETRIES = 3;
    private final PushFailurePolicy policy = new PushFailurePolicy(RETRIES, 200);

    /** Every code with the action of a single push and of a part of a split merged push, as the writer had them. */
    private static Map<StatusCode, PushFailureAction[]> expected() {
        Map<StatusCode, PushFailureAction[]> m = new EnumMap<>(StatusCode.class);
        m.put(StatusCode.OK, new PushFailureAction[] {GIVE_UP, GIVE_UP});
        m.put(StatusCode.RETRY_LATER, new PushFailureAction[] {BACK_OFF, RESEND_AFTER_BACK_OFF});
        m.put(StatusCode.SOFT_SPLIT, new PushFailureAction[] {BACK_OFF, BACK_OFF});
        m.put(StatusCode.HARD_SPLIT, new PushFailureAction[] {REVIVE, RESEND});
        m.put(StatusCode.STAGE_ENDED, new PushFailureAction[] {STAGE_ENDED, STAGE_ENDED});
        m.put(StatusCode.UNKNOWN_LOCATION, new PushFailureAction[] {REVIVE, REVIVE});
        m.put(StatusCode.DISK_FAILED, new PushFailureAction[] {REVIVE, RESEND});
        m.put(StatusCode.REPLICATE_FAILED, new PushFailureAction[] {REVIVE, RESEND});
        m.put(StatusCode.NOT_LEADER, new PushFailureAction[] {BACK_OFF, BACK_OFF});
        m.put(StatusCode.UNKNOWN_SHUFFLE, new PushFailureAction[] {GIVE_UP, GIVE_UP});
        m.put(StatusCode.SHUFFLE_DATA_LOST, new PushFailureAction[] {GIVE_UP, GIVE_UP});
        m.put(StatusCode.BAD_REQUEST, new PushFailureAction[] {GIVE_UP, GIVE_UP});
        m.put(StatusCode.CONNECTION_FAILED, new PushFailureAction[] {REVIVE, REVIVE});
        m.put(StatusCode.FATAL, new PushFailureAction[] {GIVE_UP, GIVE_UP});
        m.put(StatusCode.CONGESTED, new PushFailureAction[] {BACK_OFF, BACK_OFF});
        m.put(StatusCode.VERSION_MISMATCH, new PushFailureAction[] {GIVE_UP, GIVE_UP});
        m.put(StatusCode.UNKNOWN_STREAM, new PushFailureAction[] {BACK_OFF, BACK_OFF});
        m.put(StatusCode.STALE_ATTEMPT, new PushFailureAction[] {GIVE_UP, GIVE_UP});
        m.put(StatusCode.UNAUTHENTICATED, new PushFailureAction[] {GIVE_UP, GIVE_UP});
        m.put(StatusCode.FORBIDDEN, new PushFailureAction[] {GIVE_UP, GIVE_UP});
        m.put(StatusCode.QUOTA_EXCEEDED, new PushFailureAction[] {GIVE_UP, GIVE_UP});
        m.put(StatusCode.ADMISSION_WAIT, new PushFailureAction[] {BACK_OFF, RESEND_AFTER_BACK_OFF});
        return m;
    }

    @Test
    void everyStatusCodeHasItsAction() {
        Map<StatusCode, PushFailureAction[]> expected = expected();
        for (StatusCode s : StatusCode.values()) {
            assertTrue(expected.containsKey(s), s + " is new: decide what a writer does on it, here and in the policy");
            assertEquals(expected.get(s)[0], PushFailurePolicy.forSingle(s), "a single push failing with " + s);
            assertEquals(
                    expected.get(s)[1], PushFailurePolicy.forSplitPart(s), "a part of a merged push failing with " + s);
        }
    }

    @Test
    void theTableAgreesWithWhatEachCodeSaysOfItself() {
        for (StatusCode s : StatusCode.values()) {
            PushFailureAction single = PushFailurePolicy.forSingle(s);
            if (s == StatusCode.STAGE_ENDED) continue;
            assertEquals(!s.isRetryable(), single == GIVE_UP, s + ": gives up exactly when it is not retryable");
            if (s.isRetryable())
                assertEquals(s.needsRevive(), single == REVIVE, s + ": revives exactly when it says so");
        }
    }

    @Test
    void aSinglePushTakesItsRowWhileTriesAreLeftThenGivesUp() {
        for (StatusCode s : StatusCode.values()) {
            PushFailureAction row = PushFailurePolicy.forSingle(s);
            for (int attempt = 0; attempt < RETRIES; attempt++) {
                assertEquals(row, policy.onFailure(s, attempt, false, false), s + " on try " + attempt);
            }
            PushFailureAction last = s == StatusCode.STAGE_ENDED ? STAGE_ENDED : GIVE_UP;
            assertEquals(last, policy.onFailure(s, RETRIES, false, false), s + " out of tries");
            assertEquals(last, policy.onFailure(s, RETRIES + 5, false, false), s + " far out of tries");
        }
    }

    @Test
    void aMergedPushSplitsOnEveryRetryableFailureExceptTheWorkersOwn() {
        for (StatusCode s : StatusCode.values()) {
            boolean whole = s == StatusCode.RETRY_LATER || s == StatusCode.CONGESTED || s == StatusCode.ADMISSION_WAIT;
            assertEquals(whole, PushFailurePolicy.staysWhole(s), s + ": speaks of the worker as a whole");
            PushFailureAction expected =
                    s == StatusCode.STAGE_ENDED ? STAGE_ENDED : !s.isRetryable() ? GIVE_UP : whole ? BACK_OFF : SPLIT;
            assertEquals(expected, policy.onFailure(s, 0, true, false), "a merged push failing with " + s);
            assertEquals(
                    s == StatusCode.STAGE_ENDED ? STAGE_ENDED : GIVE_UP, policy.onFailure(s, RETRIES, true, false));
        }
    }

    @Test
    void anAbortedTaskGivesUpUnlessTheStageEnded() {
        for (StatusCode s : StatusCode.values()) {
            assertEquals(s == StatusCode.STAGE_ENDED ? STAGE_ENDED : GIVE_UP, policy.onFailure(s, 0, false, true));
            assertEquals(s == StatusCode.STAGE_ENDED ? STAGE_ENDED : GIVE_UP, policy.onFailure(s, 0, true, true));
        }
    }

    @Test
    void aFailedReviveEndsQuietlyOnlyWhenTheStageEnded() {
        for (StatusCode s : StatusCode.values()) {
            assertEquals(s == StatusCode.STAGE_ENDED ? STAGE_ENDED : BACK_OFF, PushFailurePolicy.onReviveFailure(s));
        }
        assertTrue(PushFailurePolicy.blamesWorker(StatusCode.CONNECTION_FAILED));
        assertFalse(PushFailurePolicy.blamesWorker(StatusCode.REPLICATE_FAILED), "a replica failure names no worker");
    }

    @Test
    void backoffDoublesWithJitterUpToItsCap() {
        for (int attempt = 0; attempt < 40; attempt++) {
            long full = Math.min(PushFailurePolicy.MAX_BACKOFF_MS, 200L << Math.min(attempt, 20));
            for (int draw = 0; draw < 200; draw++) {
                long wait = policy.backoff(attempt);
                assertTrue(
                        wait >= full / 2 && wait <= full,
                        "try " + attempt + " waited " + wait + ", outside " + full / 2 + ".." + full);
            }
        }
    }

    @Test
    void theEndWaitCoversEveryTryAndItsLongestBackoff() {
        long pushTimeout = 30_000;
        assertEquals(
                pushTimeout * (RETRIES + 2) + PushFailurePolicy.MAX_BACKOFF_MS * RETRIES,
                policy.settleTimeoutMs(pushTimeout));
    }
}
