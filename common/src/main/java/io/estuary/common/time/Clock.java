package io.estuary.common.time;

/**
 * Where every Estuary component reads the time: liveness, idle streams, congestion windows, back-off, stall
 * detection. Production code takes a {@code Clock} (usually {@link #system()}) instead of calling {@link System}
 * itself, so a test can drive time with a manual clock instead of sleeping.
 *
 * <p>Implementations are thread-safe.
 */
public interface Clock {
    /** Wall-clock milliseconds since the epoch: for timestamps that leave the process (records, admin views). */
    long millis();

    /** Monotonic nanoseconds from an arbitrary origin: for every duration and deadline inside the process. */
    long nanos();

    /** The JVM's clocks. */
    static Clock system() {
        return SystemClock.INSTANCE;
    }
}
