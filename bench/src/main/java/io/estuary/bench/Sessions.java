package io.estuary.bench;

import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;

/** Spark contexts for the quickstart and the benchmark: native sort shuffle, or Estuary at the given master. */
final class Sessions {
  private Sessions() {}

  static JavaSparkContext start(String appName, String estuaryMaster, int cores) {
    SparkConf conf = new SparkConf()
        .setMaster("local[" + cores + "]")
        .setAppName(appName)
        .set("spark.driver.host", "127.0.0.1")
        .set("spark.driver.bindAddress", "127.0.0.1")
        .set("spark.ui.enabled", "false")
        .set("spark.serializer", "org.apache.spark.serializer.KryoSerializer");
    if (estuaryMaster != null) {
      conf.set("spark.shuffle.manager", "org.apache.spark.shuffle.estuary.EstuaryShuffleManager")
          .set("spark.estuary.master.endpoints", estuaryMaster);
    }
    return new JavaSparkContext(conf);
  }
}
