package org.apache.spark.shuffle.estuary;

import io.estuary.client.ShuffleServices;
import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.network.netty.RelocatedNettySetup;
import java.util.function.IntConsumer;
import org.apache.spark.SparkConf;

/**
 * The {@link ShuffleServices} a Spark shuffle manager holds for the life of its SparkEnv, the same on every Spark
 * line: configured from {@code spark.estuary.*}, with the driver's lifecycle manager named after the application's
 * attempt and listening on {@code spark.driver.host}. The configuration is read (and checked) when the shuffle
 * manager is constructed; the services are made on first use, once SparkEnv is set and the application has its id,
 * because the application secret may be derived from Spark's ({@link SparkApplicationSecret}). Thread-safe.
 */
final class SparkServices {
    private final SparkConf sparkConf;
    private final EstuaryConf conf;
    private final IntConsumer onShuffleLost;
    private volatile ShuffleServices services;

    /**
     * @param isDriver on the driver the application secret is prepared here, before executors are given the conf
     * @param uiRedactsSecrets whether this Spark line redacts secret keys in its UI and event log
     * @param onShuffleLost the line's way of making Spark rerun every map of a lost shuffle; runs on the driver before
     *     the reader's fetch failure reaches the scheduler
     */
    SparkServices(SparkConf sparkConf, boolean isDriver, boolean uiRedactsSecrets, IntConsumer onShuffleLost) {
        RelocatedNettySetup.apply(); // first: before any of Estuary's Netty classes initialize
        this.sparkConf = sparkConf;
        this.conf = SparkConfBridge.toEstuaryConf(sparkConf);
        this.onShuffleLost = onShuffleLost;
        if (isDriver) SparkApplicationSecret.prepareDriver(sparkConf, conf, uiRedactsSecrets);
    }

    /** The services, made on the first call. */
    ShuffleServices get() {
        ShuffleServices s = services;
        if (s == null) {
            synchronized (this) {
                if (services == null) services = create();
                s = services;
            }
        }
        return s;
    }

    private ShuffleServices create() {
        EstuaryConf withSecret = conf.copy();
        if (sparkConf.contains(SparkApplicationSecret.SPARK_KEY)) {
            // The driver's SparkConf gained the secret after the bridge read it.
            withSecret.set(AuthConfig.APPLICATION_SECRET.key(), sparkConf.get(SparkApplicationSecret.SPARK_KEY));
        }
        SparkApplicationSecret.complete(sparkConf, withSecret);
        return new ShuffleServices(withSecret, () -> {
            String host = sparkConf.get("spark.driver.host", "localhost");
            LifecycleManager created =
                    new LifecycleManager(SparkConfBridge.applicationAttemptId(sparkConf), withSecret, host);
            created.onShuffleLost(onShuffleLost);
            return created;
        });
    }

    /** Releases the shuffle if the services were ever made. */
    void unregisterShuffle(int shuffleId) {
        ShuffleServices s = services;
        if (s != null) s.unregisterShuffle(shuffleId);
    }

    /** Stops the services if they were ever made. */
    void close() {
        ShuffleServices s = services;
        if (s != null) s.close();
    }

    /** Throws a checked exception (Spark's FetchFailedException) from code that may not declare it. */
    @SuppressWarnings("unchecked")
    static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }
}
