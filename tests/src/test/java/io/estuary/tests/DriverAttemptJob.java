package io.estuary.tests;

import io.estuary.common.config.ClientConfig;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * The job of {@link DriverAttemptTest}, and the main class of its first driver's JVM: a salted count per key (each
 * row's key gets a random salt, the partial counts are summed, the salt dropped and the counts summed again). The
 * salts differ every run, so the first shuffle's rows differ between two runs of the same job, while the result
 * does not. With a marker path, the stage after the first shuffle writes the marker and blocks for good: a driver
 * whose maps ended, waiting to be killed.
 */
public final class DriverAttemptJob {
    /** The application heartbeat interval as a Spark setting (both attempts beat every 500 ms). */
    static final String HEARTBEAT_INTERVAL_KEY =
            "spark.estuary." + ClientConfig.APPLICATION_HEARTBEAT_INTERVAL.key().substring("estuary.".length());

    static final int SLICES = 8;

    private DriverAttemptJob() {}

    static Checksum job(SparkSession s, String markerOrNull) {
        List<Integer> seeds = new ArrayList<>();
        for (int i = 0; i < SLICES; i++) seeds.add(i);
        JavaPairRDD<String, Long> salted = ShuffleJobs.jsc(s)
                .parallelize(seeds, SLICES)
                .flatMapToPair(slice -> {
                    Random salt = new Random();
                    List<Tuple2<String, Long>> out = new ArrayList<>();
                    for (int i = slice; i < 60_000; i += SLICES)
                        out.add(new Tuple2<>("k" + (i % 700) + "#" + salt.nextInt(8), 1L));
                    return out.iterator();
                })
                .reduceByKey(Long::sum, SLICES);
        JavaPairRDD<String, Long> counts =
                salted.mapPartitionsToPair(it -> unsalt(it, markerOrNull)).reduceByKey(Long::sum, 4);
        return Checksum.of(counts.map(kv -> kv._1() + "=" + kv._2()));
    }

    static Iterator<Tuple2<String, Long>> unsalt(Iterator<Tuple2<String, Long>> it, String markerOrNull)
            throws Exception {
        if (markerOrNull != null) {
            Files.write(Paths.get(markerOrNull), new byte[0]);
            Thread.sleep(Long.MAX_VALUE);
        }
        List<Tuple2<String, Long>> out = new ArrayList<>();
        while (it.hasNext()) {
            Tuple2<String, Long> kv = it.next();
            out.add(new Tuple2<>(kv._1().substring(0, kv._1().indexOf('#')), kv._2()));
        }
        return out.iterator();
    }

    /** Args: Estuary master endpoint, application id, attempt id, marker path. Runs until killed. */
    public static void main(String[] args) {
        SparkSession s = SparkSessions.start(SparkSessions.estuary(
                        SparkSessions.base(
                                AttemptClusterManager.master(2, args[1], Integer.parseInt(args[2])),
                                "driver-attempt-" + args[2]),
                        args[0])
                // The test's master expires applications after 3 s: heartbeat well within it (the default is
                // 30 s), so that this attempt's application lives until the kill and only expires after it.
                .set(HEARTBEAT_INTERVAL_KEY, "500ms"));
        job(s, args[3]);
    }
}
