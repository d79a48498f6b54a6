package org.apache.spark.shuffle.estuary;

import org.apache.spark.ShuffleDependency;

/**
 * Test access to what the Spark 1.6 / 2.4 driver does when a reader reports an Estuary shuffle lost (the manager's
 * shuffleLost): the next stage attempt of its maps writes a fresh generation, and Spark forgets every map output of
 * it. In this package because both steps are package-private; the test's class path holds the shaded jar (not
 * sealed) in the same class loader. Driver only (local mode: the test's JVM).
 */
public final class LegacyShuffleLoss {
    private LegacyShuffleLoss() {}

    public static void lost(ShuffleDependency<?, ?, ?> dep) {
        ((EstuaryShuffleHandle<?, ?, ?>) dep.shuffleHandle()).nextGeneration();
        SparkLine.forgetMapOutputs(dep.shuffleId());
    }
}
