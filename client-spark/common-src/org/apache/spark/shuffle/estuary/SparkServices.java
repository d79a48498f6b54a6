package org.apache.spark.shuffle.estuary;

import io.estuary.client.ShuffleServices;
import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.common.config.EstuaryConf;
import java.util.function.IntConsumer;
import org.apache.spark.SparkConf;

/**
 * The {@link ShuffleServices} a Spark shuffle manager holds for the life of its SparkEnv, the same on every Spark
 * line: configured from {@code spark.estuary.*}, with the driver's lifecycle manager named after the application's
 * attempt and listening on {@code spark.driver.host}. Stateless: static functions only.
 */
final class SparkServices {
    private SparkServices() {}

    /**
     * @param onShuffleLost the line's way of making Spark rerun every map of a lost shuffle; runs on the driver before
     *     the reader's fetch failure reaches the scheduler
     */
    static ShuffleServices create(SparkConf sparkConf, IntConsumer onShuffleLost) {
        EstuaryConf conf = SparkConfBridge.toEstuaryConf(sparkConf);
        return new ShuffleServices(conf, () -> {
            String host = sparkConf.get("spark.driver.host", "localhost");
            LifecycleManager created =
                    new LifecycleManager(SparkConfBridge.applicationAttemptId(sparkConf), conf, host);
            created.onShuffleLost(onShuffleLost);
            return created;
        });
    }

    /** Throws a checked exception (Spark's FetchFailedException) from code that may not declare it. */
    @SuppressWarnings("unchecked")
    static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }
}
