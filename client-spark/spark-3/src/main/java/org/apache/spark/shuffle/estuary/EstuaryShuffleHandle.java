package org.apache.spark.shuffle.estuary;

import io.estuary.client.spec.ShuffleSpec;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.shuffle.BaseShuffleHandle;

/** Spark's handle of an Estuary shuffle: the dependency plus what tasks need to reach Estuary. */
public final class EstuaryShuffleHandle<K, V, C> extends BaseShuffleHandle<K, V, C> {
    private static final long serialVersionUID = 1L;

    private final ShuffleSpec spec;
    private final boolean indeterminate;

    /**
     * @param indeterminate whether the map stage may write different rows when it reruns (known on the driver only:
     *     the dependency's RDD does not travel to executors)
     */
    public EstuaryShuffleHandle(
            int shuffleId, ShuffleDependency<K, V, C> dependency, ShuffleSpec spec, boolean indeterminate) {
        super(shuffleId, dependency);
        this.spec = spec;
        this.indeterminate = indeterminate;
    }

    public boolean indeterminate() {
        return indeterminate;
    }

    public ShuffleSpec spec() {
        return spec;
    }
}
