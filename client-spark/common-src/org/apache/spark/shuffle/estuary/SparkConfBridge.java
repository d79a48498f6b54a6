package org.apache.spark.shuffle.estuary;

import io.estuary.client.engine.EngineConf;
import io.estuary.client.engine.EngineSettings;
import io.estuary.common.config.EstuaryConf;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.SparkConf;
import scala.Tuple2;

/**
 * Reads {@code spark.estuary.*} settings as Estuary's {@code estuary.*} keys, and the application's attempt. Shared by
 * every Spark line. Stateless.
 */
final class SparkConfBridge {
    private static final String SPARK_PREFIX = "spark.";
    /** Set by SparkContext (Spark 3.2 on) when the cluster manager retries drivers (YARN cluster mode). */
    private static final String ATTEMPT_ID = "spark.app.attempt.id";
    /** Set by YARN's ApplicationMaster in cluster mode on older Spark lines. */
    private static final String YARN_ATTEMPT_ID = "spark.yarn.app.attemptId";

    private SparkConfBridge() {}

    static EstuaryConf toEstuaryConf(SparkConf sparkConf) {
        Map<String, String> all = new HashMap<>();
        for (Tuple2<String, String> kv : sparkConf.getAll()) all.put(kv._1(), kv._2());
        followSparkCompression(all);
        // Workers slow down heavy pushers per user too: Spark's user (SPARK_USER, or the login user) by default.
        return EngineConf.fromEngineKeys(
                EngineSettings.of(all), SPARK_PREFIX, org.apache.spark.util.Utils::getCurrentUserName);
    }

    /**
     * Where the application did not choose Estuary's codec, it gets what Spark's own shuffle would do with its
     * settings: none when {@code spark.shuffle.compress} is false, zstd when {@code spark.io.compression.codec} is
     * zstd, else Estuary's default (lz4, also for Spark's snappy and lzf). Where it did not choose Estuary's zstd
     * level, Spark's ({@code spark.io.compression.zstd.level}) counts.
     */
    static void followSparkCompression(Map<String, String> all) {
        String codec = SPARK_PREFIX + "estuary.client.compression.codec";
        if (!all.containsKey(codec)) {
            if ("false"
                    .equalsIgnoreCase(
                            all.getOrDefault("spark.shuffle.compress", "true").trim())) {
                all.put(codec, "none");
            } else if (isZstd(all.getOrDefault("spark.io.compression.codec", "").trim())) {
                all.put(codec, "zstd");
            }
        }
        String level = all.get("spark.io.compression.zstd.level");
        if (level != null) all.putIfAbsent(SPARK_PREFIX + "estuary.client.compression.zstd.level", level.trim());
    }

    /** Spark's short name or its codec class. */
    private static boolean isZstd(String sparkCodec) {
        return sparkCodec.equalsIgnoreCase("zstd") || sparkCodec.equals("org.apache.spark.io.ZStdCompressionCodec");
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
