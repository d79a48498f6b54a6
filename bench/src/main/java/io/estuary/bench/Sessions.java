package io.estuary.bench;

import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;

/** Spark contexts for the quickstart and the benchmark: native sort shuffle, or Estuary at the given master. */
final class Sessions {
    private Sessions() {}

    static JavaSparkContext start(String appName, String estuaryMaster, int cores) {
        return new JavaSparkContext(conf(appName, estuaryMaster, "local[" + cores + "]"));
    }

    /** The settings of {@link #start}, with any Spark master (e.g. {@code local[2,4]} for 4 task attempts). */
    static SparkConf conf(String appName, String estuaryMaster, String sparkMaster) {
        SparkConf conf = new SparkConf()
                .setMaster(sparkMaster)
                .setAppName(appName)
                .set("spark.driver.host", "127.0.0.1")
                .set("spark.driver.bindAddress", "127.0.0.1")
                .set("spark.ui.enabled", "false")
                .set("spark.serializer", "org.apache.spark.serializer.KryoSerializer");
        if (estuaryMaster != null) {
            conf.set("spark.shuffle.manager", "org.apache.spark.shuffle.estuary.EstuaryShuffleManager")
                    .set("spark.estuary.master.endpoints", estuaryMaster);
        }
        return conf;
    }
}
