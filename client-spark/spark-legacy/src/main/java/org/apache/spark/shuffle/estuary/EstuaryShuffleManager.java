package org.apache.spark.shuffle.estuary;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.spec.ShuffleSpec;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.ShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleHandle;
import org.apache.spark.shuffle.ShuffleManager;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.ShuffleWriter;

/**
 * Spark 1.6 and 2.4's entry point to Estuary: {@code spark.shuffle.manager=
 * org.apache.spark.shuffle.estuary.EstuaryShuffleManager} plus {@code spark.estuary.master.endpoints}, as on newer
 * Spark. Every shuffle goes through Estuary; it never falls back to Spark's own shuffle. Thread-safe.
 */
public class EstuaryShuffleManager implements ShuffleManager {
    private final EstuaryBlockResolver resolver = new EstuaryBlockResolver();
    /** Driver only: the handles of live shuffles, whose generation a loss bumps. */
    private final Map<Integer, EstuaryShuffleHandle<?, ?, ?>> handles = new ConcurrentHashMap<>();

    private final SparkServices services;

    public EstuaryShuffleManager(SparkConf sparkConf, boolean isDriver) {
        this.services = new SparkServices(sparkConf, isDriver, SparkLine.UI_REDACTS_SECRETS, this::shuffleLost);
        if (isDriver) {
            ExecutorClassPathCheck.verify(sparkConf, EstuaryShuffleManager.class);
        }
    }

    public EstuaryShuffleManager(SparkConf sparkConf) {
        this(sparkConf, false);
    }

    /** Runs before the reader's fetch failure reaches the scheduler: the rerun's maps write a new generation. */
    private void shuffleLost(int shuffleId) {
        EstuaryShuffleHandle<?, ?, ?> h = handles.get(shuffleId);
        if (h != null) h.nextGeneration();
        SparkLine.forgetMapOutputs(shuffleId);
    }

    @Override
    public <K, V, C> ShuffleHandle registerShuffle(int shuffleId, int numMaps, ShuffleDependency<K, V, C> dependency) {
        LifecycleManager lm = services.get().lifecycle();
        ShuffleSpec spec = new ShuffleSpec(
                lm.appId(), shuffleId, numMaps, dependency.partitioner().numPartitions(), lm.host(), lm.port());
        EstuaryShuffleHandle<K, V, C> handle =
                new EstuaryShuffleHandle<>(shuffleId, numMaps, dependency, spec, SparkLine.indeterminate(dependency));
        handles.put(shuffleId, handle);
        lm.declareShuffle(shuffleId, spec.numMappers, spec.numPartitions);
        return handle;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <K, V> ShuffleWriter<K, V> getWriter(ShuffleHandle handle, int mapId, TaskContext context) {
        return new EstuaryShuffleWriter<>(
                (EstuaryShuffleHandle<K, V, ?>) checked(handle),
                mapId,
                context,
                services.get().client());
    }

    @Override
    @SuppressWarnings("unchecked")
    public <K, C> ShuffleReader<K, C> getReader(
            ShuffleHandle handle, int startPartition, int endPartition, TaskContext context) {
        return new EstuaryShuffleReader<>(
                (EstuaryShuffleHandle<K, ?, C>) checked(handle),
                startPartition,
                endPartition,
                context,
                services.get().client());
    }

    /** Refuses a handle that is not ours, loudly (see the Spark 3 manager for the usual cause). */
    static EstuaryShuffleHandle<?, ?, ?> checked(ShuffleHandle handle) {
        if (handle instanceof EstuaryShuffleHandle) return (EstuaryShuffleHandle<?, ?, ?>) handle;
        String name = handle == null ? "null" : handle.getClass().getName();
        throw new IllegalStateException("Estuary was given a shuffle handle it did not create (" + name + ", loaded by "
                + (handle == null ? null : handle.getClass().getClassLoader())
                + "); put the Estuary jar on Spark's own "
                + "class path only. Estuary never falls back to Spark's shuffle.");
    }

    @Override
    public boolean unregisterShuffle(int shuffleId) {
        handles.remove(shuffleId);
        services.unregisterShuffle(shuffleId);
        return true;
    }

    @Override
    public ShuffleBlockResolver shuffleBlockResolver() {
        return resolver;
    }

    @Override
    public void stop() {
        services.close();
    }
}
