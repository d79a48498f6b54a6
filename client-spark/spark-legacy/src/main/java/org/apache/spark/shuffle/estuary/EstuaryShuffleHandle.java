package org.apache.spark.shuffle.estuary;

import io.estuary.client.spec.ShuffleSpec;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.shuffle.BaseShuffleHandle;

/**
 * Spark's handle of an Estuary shuffle on Spark 1.6 and 2.4: the dependency, what tasks need to reach Estuary, and
 * the generation maps write into.
 *
 * <p>Spark 1.6 tells a task nothing of its stage attempt, so the driver counts generations here instead: when a
 * reader reports the shuffle lost, the driver bumps {@link #generation()} before the scheduler hears of the fetch
 * failure. Spark serializes the dependency (and this handle with it) anew for every stage attempt, so the rerun's
 * maps carry the new generation and write a fresh Estuary shuffle. Thread-safety: the generation is volatile; the
 * rest is immutable.
 */
public final class EstuaryShuffleHandle<K, V, C> extends BaseShuffleHandle<K, V, C> {
    private static final long serialVersionUID = 1L;

    private final ShuffleSpec spec;
    private final boolean indeterminate;
    private volatile int generation;

    public EstuaryShuffleHandle(
            int shuffleId,
            int numMaps,
            ShuffleDependency<K, V, C> dependency,
            ShuffleSpec spec,
            boolean indeterminate) {
        super(shuffleId, numMaps, dependency);
        this.spec = spec;
        this.indeterminate = indeterminate;
    }

    public ShuffleSpec spec() {
        return spec;
    }

    public boolean indeterminate() {
        return indeterminate;
    }

    /** The generation this stage attempt's maps write: 0, then one more after each loss. */
    public int generation() {
        return generation;
    }

    /** Driver only: the shuffle was lost, the next stage attempt writes a fresh generation. */
    synchronized void nextGeneration() {
        generation++;
    }
}
