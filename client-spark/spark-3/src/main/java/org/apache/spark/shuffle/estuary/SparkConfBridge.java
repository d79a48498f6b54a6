package org.apache.spark.shuffle.estuary;

import io.estuary.common.config.EstuaryConf;
import org.apache.spark.SparkConf;
import scala.Tuple2;

/** Reads {@code spark.estuary.*} settings as Estuary's {@code estuary.*} keys. */
final class SparkConfBridge {
  private static final String SPARK_PREFIX = "spark.";

  private SparkConfBridge() {}

  static EstuaryConf toEstuaryConf(SparkConf sparkConf) {
    EstuaryConf conf = new EstuaryConf();
    for (Tuple2<String, String> kv : sparkConf.getAll()) {
      if (kv._1().startsWith(SPARK_PREFIX + EstuaryConf.PREFIX)) {
        conf.set(kv._1().substring(SPARK_PREFIX.length()), kv._2());
      }
    }
    // Workers slow down heavy pushers per user too: Spark's user (SPARK_USER, or the login user) by default.
    if (!sparkConf.contains(SPARK_PREFIX + io.estuary.common.config.ClientConfig.USER.key())) {
      conf.set(io.estuary.common.config.ClientConfig.USER.key(), org.apache.spark.util.Utils.getCurrentUserName());
    }
    return conf;
  }
}
