package org.apache.spark.shuffle.estuary;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.spec.ShuffleSpec;
import org.apache.spark.MapOutputTracker;
import org.apache.spark.MapOutputTrackerMaster;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.ShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleHandle;
import org.apache.spark.shuffle.ShuffleManager;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;

/**
 * Spark's entry point to Estuary: {@code spark.shuffle.manager=org.apache.spark.shuffle.estuary.EstuaryShuffleManager}
 * plus {@code spark.estuary.master.endpoints}. Every shuffle goes through Estuary; when Estuary cannot work the job
 * fails with a message saying why. It never falls back to Spark's own shuffle.
 */
public class EstuaryShuffleManager implements ShuffleManager {
    private final boolean isDriver;
    private final EstuaryBlockResolver resolver = new EstuaryBlockResolver();
    private final SparkServices services;

    public EstuaryShuffleManager(SparkConf sparkConf, boolean isDriver) {
        this.isDriver = isDriver;
        // Every Spark line from 2.2 on redacts keys holding "secret" in its UI and event log.
        this.services = new SparkServices(sparkConf, isDriver, true, EstuaryShuffleManager::forgetMapOutputs);
        if (isDriver) {
            ExecutorClassPathCheck.verify(sparkConf, EstuaryShuffleManager.class);
            // Before SparkContext loads the shuffle I/O plugin and validates dynamic allocation (same SparkConf
            // object).
            DynamicAllocationSetup.prepare(sparkConf);
        }
    }

    public EstuaryShuffleManager(SparkConf sparkConf) {
        this(sparkConf, false);
    }

    /**
     * Before a reader's fetch failure reaches the scheduler, forget every map output of the lost shuffle: Spark then
     * reruns all its maps (Spark itself unregisters nothing for a failure naming no map).
     */
    private static void forgetMapOutputs(int shuffleId) {
        MapOutputTracker tracker = SparkEnv.get().mapOutputTracker();
        if (tracker instanceof MapOutputTrackerMaster) {
            ((MapOutputTrackerMaster) tracker).unregisterAllMapAndMergeOutput(shuffleId);
        }
    }

    @Override
    public <K, V, C> ShuffleHandle registerShuffle(int shuffleId, ShuffleDependency<K, V, C> dependency) {
        LifecycleManager lm = services.get().lifecycle();
        ShuffleSpec spec = new ShuffleSpec(
                lm.appId(),
                shuffleId,
                dependency.rdd().getNumPartitions(),
                dependency.partitioner().numPartitions(),
                lm.host(),
                lm.port());
        // An indeterminate stage (e.g. a round-robin repartition) may write different rows when it reruns: a rerun
        // then replaces all of its output rather than completing the old one.
        boolean indeterminate =
                "INDETERMINATE".equals(String.valueOf(dependency.rdd().outputDeterministicLevel()));
        // Registers in the background while Spark schedules the map stage: its tasks then find the locations ready.
        lm.declareShuffle(shuffleId, spec.numMappers, spec.numPartitions);
        return new EstuaryShuffleHandle<>(shuffleId, dependency, spec, indeterminate);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <K, V> ShuffleWriter<K, V> getWriter(
            ShuffleHandle handle, long mapId, TaskContext context, ShuffleWriteMetricsReporter metrics) {
        return new EstuaryShuffleWriter<>(
                (EstuaryShuffleHandle<K, V, ?>) checked(handle),
                mapId,
                context,
                services.get().client(),
                metrics);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <K, C> ShuffleReader<K, C> getReader(
            ShuffleHandle handle,
            int startMapIndex,
            int endMapIndex,
            int startPartition,
            int endPartition,
            TaskContext context,
            ShuffleReadMetricsReporter metrics) {
        return new EstuaryShuffleReader<>(
                (EstuaryShuffleHandle<K, ?, C>) checked(handle),
                startMapIndex,
                endMapIndex,
                startPartition,
                endPartition,
                context,
                services.get().client(),
                metrics);
    }

    /**
     * Refuses a handle that is not ours, loudly. The usual cause is a second copy of Estuary's classes loaded by
     * another class loader (spark.executor.userClassPathFirst=true with the Estuary jar among the user's jars).
     */
    static EstuaryShuffleHandle<?, ?, ?> checked(ShuffleHandle handle) {
        if (handle instanceof EstuaryShuffleHandle) return (EstuaryShuffleHandle<?, ?, ?>) handle;
        String name = handle == null ? "null" : handle.getClass().getName();
        if (EstuaryShuffleHandle.class.getName().equals(name)) {
            throw new IllegalStateException(
                    "Estuary cannot use shuffle handle " + handle.shuffleId() + ": its class was "
                            + "loaded by " + handle.getClass().getClassLoader() + " but the shuffle manager's by "
                            + EstuaryShuffleHandle.class.getClassLoader()
                            + ". Two copies of the Estuary client are on the class "
                            + "path (is spark.executor.userClassPathFirst=true with the Estuary jar among the application's jars?). "
                            + "Put the Estuary jar on Spark's own class path only. Estuary never falls back to Spark's shuffle.");
        }
        throw new IllegalStateException("Estuary was given a shuffle handle it did not create (" + name + "); "
                + "Estuary never falls back to Spark's shuffle.");
    }

    @Override
    public boolean unregisterShuffle(int shuffleId) {
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

    boolean isDriver() {
        return isDriver;
    }
}
