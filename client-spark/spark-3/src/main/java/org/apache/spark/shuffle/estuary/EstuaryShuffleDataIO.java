package org.apache.spark.shuffle.estuary;

import java.util.Collections;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.api.ShuffleDataIO;
import org.apache.spark.shuffle.api.ShuffleDriverComponents;
import org.apache.spark.shuffle.api.ShuffleExecutorComponents;
import org.apache.spark.shuffle.api.ShuffleMapOutputWriter;

/**
 * Spark's shuffle data I/O plugin ({@code spark.shuffle.sort.io.plugin.class}) for Estuary. Its only job is to tell
 * the driver that map outputs live outside the executors ({@code supportsReliableStorage}), so that on Spark 3.5+
 * dynamic allocation releases idle executors without an external shuffle service and the scheduler keeps their map
 * outputs when they go. {@link EstuaryShuffleManager} sets it unless the user chose another plugin.
 *
 * <p>Estuary's shuffle manager never asks a plugin for writers, so {@link #executor()} refuses to write: with any
 * other shuffle manager this plugin would claim reliable storage for data on local disks, and the driver side refuses
 * to start in that case. Stateless and thread-safe.
 */
public final class EstuaryShuffleDataIO implements ShuffleDataIO {
    private final SparkConf conf;

    /** Spark instantiates the plugin by this constructor. */
    public EstuaryShuffleDataIO(SparkConf conf) {
        this.conf = conf;
    }

    @Override
    public ShuffleDriverComponents driver() {
        return new DriverComponents(conf);
    }

    @Override
    public ShuffleExecutorComponents executor() {
        return new ExecutorComponents();
    }

    static String misuse() {
        return EstuaryShuffleDataIO.class.getName() + " only works with spark.shuffle.manager="
                + EstuaryShuffleManager.class.getName() + " (it declares that map outputs survive their executors, "
                + "which is only true when Estuary holds them); unset spark.shuffle.sort.io.plugin.class";
    }

    /** Declares reliable storage; registers and removes nothing (the shuffle manager does that with Estuary). */
    static final class DriverComponents implements ShuffleDriverComponents {
        private final SparkConf conf;

        DriverComponents(SparkConf conf) {
            this.conf = conf;
        }

        @Override
        public Map<String, String> initializeApplication() {
            if (!EstuaryShuffleManager.class.getName().equals(conf.get("spark.shuffle.manager", ""))) {
                throw new IllegalStateException(misuse());
            }
            return Collections.emptyMap();
        }

        @Override
        public void cleanupApplication() {}

        /**
         * Spark 3.5+ asks this; older Spark has no such method and never calls it (hence no {@code @Override}, so the
         * class also compiles against 3.3 and 3.4).
         */
        public boolean supportsReliableStorage() {
            return true;
        }
    }

    /** Never used by Estuary's shuffle manager; refuses to write if another manager tries. */
    static final class ExecutorComponents implements ShuffleExecutorComponents {
        @Override
        public void initializeExecutor(String appId, String execId, Map<String, String> extraConfigs) {}

        @Override
        public ShuffleMapOutputWriter createMapOutputWriter(int shuffleId, long mapTaskId, int numPartitions) {
            throw new IllegalStateException(misuse());
        }
    }
}
