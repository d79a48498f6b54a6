package io.estuary.client.write;

/** What a {@link MapOutputWriter} does with a push that failed; chosen by {@link PushFailurePolicy}. */
public enum PushFailureAction {
    /** Wait a jittered back-off, then send the batch again to the partition's location as it is then. */
    BACK_OFF,
    /** Ask the driver for a new location (epoch) of the partition, then send the batch there. */
    REVIVE,
    /**
     * A merged push: split it into one single push per partition, each handled on its own (some partitions may be
     * fine); see {@link PushFailurePolicy#forSplitPart}.
     */
    SPLIT,
    /** A part of a split merged push: send it again at once to the location it was grouped by. */
    RESEND,
    /** A part of a split merged push: send it again to the location it was grouped by, after a back-off. */
    RESEND_AFTER_BACK_OFF,
    /** The stage already ended: this attempt lost the race and its data is not needed; settle the push quietly. */
    STAGE_ENDED,
    /** Fail the push (and so the task): not retryable, out of tries, or the task was aborted. */
    GIVE_UP
}
