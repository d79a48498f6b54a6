package io.estuary.tests;

import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;

/** Local Spark sessions on loopback, with native sort shuffle or with Estuary. */
public final class SparkSessions {
    private SparkSessions() {}

    public static final String MANAGER = "org.apache.spark.shuffle.estuary.EstuaryShuffleManager";

    public static SparkConf base(String master, String appName) {
        return new SparkConf()
                .setMaster(master)
                .setAppName(appName)
                .set("spark.driver.host", "127.0.0.1")
                .set("spark.driver.bindAddress", "127.0.0.1")
                .set("spark.ui.enabled", "false")
                // Tests sum task metrics through a listener: a job of 20,000 tasks posts more events than the
                // default queue (10,000) holds, and Spark drops the overflow, which reads as missing records.
                .set("spark.scheduler.listenerbus.eventqueue.capacity", "100000")
                .set("spark.sql.shuffle.partitions", "16")
                .set("spark.sql.adaptive.enabled", "true")
                .set("spark.sql.autoBroadcastJoinThreshold", "-1")
                .set("spark.default.parallelism", "4");
    }

    public static SparkConf estuary(SparkConf conf, String masterEndpoint) {
        return conf.set("spark.shuffle.manager", MANAGER)
                .set("spark.estuary.master.endpoints", masterEndpoint)
                .set("spark.estuary.client.push.retryWait", "100ms");
    }

    /** Estuary's Spark SQL extensions (a local limit below every global limit); optional for Estuary itself. */
    public static SparkConf withSqlExtensions(SparkConf conf) {
        return conf.set("spark.sql.extensions", "org.apache.spark.sql.estuary.EstuarySqlExtensions");
    }

    public static SparkSession start(SparkConf conf) {
        return SparkSession.builder().config(conf).getOrCreate();
    }
}
