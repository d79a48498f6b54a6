package io.estuary.client.write;

/**
 * The attempt id a map attempt's batches carry. Readers keep only the batches of the attempt that ended first, so
 * two attempts of one map must never share an id, even when the engine gives them the same attempt number (Spark
 * runs two attempts numbered 0 when a speculative or zombie task overlaps a resubmitted one: SPARK-8029). Spark names
 * a map output by its task attempt id, unique in the application; the batch header holds 32 bits of it.
 * Stateless.
 */
public final class AttemptIds {
    private AttemptIds() {}

    /**
     * The attempt id of the task attempt {@code taskAttemptId}: its low 31 bits, never negative (the driver marks a
     * map without an ended attempt with -1). Two attempts of one map could share it only with 2^31 task attempts
     * started between them in one stage attempt.
     */
    public static int ofTaskAttempt(long taskAttemptId) {
        return (int) (taskAttemptId & 0x7fffffffL);
    }
}
