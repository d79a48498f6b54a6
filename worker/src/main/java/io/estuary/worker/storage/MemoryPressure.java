package io.estuary.worker.storage;

/**
 * How full the worker's memory is, and the one function that moves between levels. Pausing happens at high
 * watermarks and resuming only below a lower one, so a worker near a mark does not flap.
 *
 * <pre>
 *   NORMAL     --held >= pausePush-->      PAUSE_PUSH     (stop reading clients' pushes)
 *   any        --held >= pauseReplicate--> PAUSE_ALL      (also stop reading replication)
 *   PAUSE_ALL  --held <  pausePush-->      PAUSE_PUSH     (replication resumes first)
 *   any        --held <  resume-->         NORMAL         (every connection resumes)
 * </pre>
 */
public enum MemoryPressure {
    NORMAL,
    PAUSE_PUSH,
    PAUSE_ALL;

    /** The watermarks, in bytes. Immutable. */
    public static final class Watermarks {
        final long resume;
        final long pausePush;
        final long pauseAll;

        public Watermarks(long limit, double resumeRatio, double pausePushRatio, double pauseReplicateRatio) {
            if (!(resumeRatio < pausePushRatio && pausePushRatio <= pauseReplicateRatio)) {
                throw new IllegalArgumentException(
                        "memory watermarks must satisfy resume (" + resumeRatio + ") < pause " + "push ("
                                + pausePushRatio + ") <= pause replicate (" + pauseReplicateRatio + ")");
            }
            this.resume = (long) (limit * resumeRatio);
            this.pausePush = (long) (limit * pausePushRatio);
            this.pauseAll = (long) (limit * pauseReplicateRatio);
        }

        public long resume() {
            return resume;
        }

        @Override
        public String toString() {
            return "resume below " + resume + ", pause pushes at " + pausePush + ", pause all at " + pauseAll;
        }
    }

    /** The level after this one once {@code held} bytes are held. */
    public MemoryPressure next(long held, Watermarks w) {
        if (held >= w.pauseAll) return PAUSE_ALL;
        if (held < w.resume) return NORMAL;
        switch (this) {
            case NORMAL:
                return held >= w.pausePush ? PAUSE_PUSH : NORMAL;
            case PAUSE_ALL:
                return held >= w.pausePush ? PAUSE_ALL : PAUSE_PUSH;
            default:
                return this;
        }
    }

    /** Whether a connection of the given kind may be read at this level. */
    public boolean reads(boolean replication) {
        return replication ? this != PAUSE_ALL : this == NORMAL;
    }
}
