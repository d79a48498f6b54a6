package org.apache.spark.shuffle.estuary;

import io.estuary.common.config.EstuaryConf;
import org.apache.spark.SparkConf;
import scala.Tuple2;

/** Reads {@code spark.estuary.*} settings as Estuary's {@code estuary.*} keys, and the application's attempt. */
final class SparkConfBridge {
  private static final String SPARK_PREFIX = "spark.";
  /** Set by SparkContext (Spark 3.2 on) when the cluster manager retries drivers (YARN cluster mode). */
  private static final String ATTEMPT_ID = "spark.app.attempt.id";
  /** Set by YARN's ApplicationMaster in cluster mode on older Spark lines. */
  private static final String YARN_ATTEMPT_ID = "spark.yarn.app.attemptId";

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

  /**
   * Spark's application id with the driver's attempt when Spark has one ({@code application_..._0001_2}): a YARN
   * cluster-mode driver retried by YARN keeps the application id. Driver only, once SparkContext has set its ids.
   */
  static String applicationAttemptId(SparkConf sparkConf) {
    String attempt = sparkConf.get(ATTEMPT_ID, sparkConf.get(YARN_ATTEMPT_ID, ""));
    return attempt.isEmpty() ? sparkConf.getAppId() : sparkConf.getAppId() + "_" + attempt;
  }
}
