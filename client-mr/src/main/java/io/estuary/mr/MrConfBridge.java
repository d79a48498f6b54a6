package io.estuary.mr;

import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;

/**
 * Reads the {@code estuary.*} settings of a job configuration as Estuary's own keys (the same declarations as for
 * Spark, without Spark's {@code spark.} prefix). An unknown {@code estuary.*} key fails, as it does for the servers.
 *
 * <p>Stateless: static functions only, safe from any thread.
 */
final class MrConfBridge {
  private MrConfBridge() {}

  static EstuaryConf toEstuaryConf(Configuration job) {
    EstuaryConf conf = new EstuaryConf();
    for (Map.Entry<String, String> kv : job) {
      if (kv.getKey().startsWith(EstuaryConf.PREFIX)) conf.set(kv.getKey(), job.get(kv.getKey()));
    }
    // Workers slow down heavy pushers per user: the job's user by default.
    if (job.get(ClientConfig.USER.key()) == null) {
      String user = job.get("mapreduce.job.user.name", System.getProperty("user.name", ""));
      conf.set(ClientConfig.USER.key(), user);
    }
    return conf;
  }
}
