package org.apache.spark.shuffle.estuary;

import io.estuary.client.ShuffleSpec;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.shuffle.BaseShuffleHandle;

/** Spark's handle of an Estuary shuffle: the dependency plus what tasks need to reach Estuary. */
public final class EstuaryShuffleHandle<K, V, C> extends BaseShuffleHandle<K, V, C> {
  private static final long serialVersionUID = 1L;

  private final ShuffleSpec spec;

  public EstuaryShuffleHandle(int shuffleId, ShuffleDependency<K, V, C> dependency, ShuffleSpec spec) {
    super(shuffleId, dependency);
    this.spec = spec;
  }

  public ShuffleSpec spec() {
    return spec;
  }
}
