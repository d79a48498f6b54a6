package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.estuary.client.ShuffleClient;
import io.estuary.client.ShuffleServices;
import io.estuary.common.config.EstuaryConf;
import io.estuary.worker.MiniCluster;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.MapOutputTrackerMaster;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * Reduce tasks find where their partitions are through the executor's kept answer (issue 18, item 4): one question
 * to the driver per executor and map output epoch, not one per task. When Spark raises the epoch (as it does when
 * outputs are lost or a stage reruns), the next read asks again. Outputs equal to the input every time.
 */
class FileGroupCacheSparkTest {
    static final int VALUES = 30_000;
    static final int KEYS = 101;
    static final int REDUCERS = 40;

    /** The executor's shuffle client (local mode: this JVM's), reached through the shuffle manager Spark made. */
    private static ShuffleClient client() throws Exception {
        Object manager = SparkEnv.get().shuffleManager();
        Field services = manager.getClass().getDeclaredField("services");
        services.setAccessible(true);
        Object spark = services.get(manager);
        Method get = spark.getClass().getDeclaredMethod("get");
        get.setAccessible(true);
        return ((ShuffleServices) get.invoke(spark)).client();
    }

    @Test
    void reduceTasksAskOncePerEpochAndReadEveryRecordOnce() throws Exception {
        List<Integer> values = new ArrayList<>();
        List<String> expectedRows = new ArrayList<>();
        long[] sums = new long[KEYS];
        for (int v = 0; v < VALUES; v++) {
            values.add(v);
            sums[v % KEYS] += v;
        }
        for (int k = 0; k < KEYS; k++) expectedRows.add(k + "=" + sums[k]);
        Checksum expected = Checksum.ofLocal(expectedRows);

        try (MiniCluster cluster = new MiniCluster(2, 1, new EstuaryConf())) {
            SparkSession spark = SparkSessions.start(SparkSessions.estuary(
                    SparkSessions.base("local[2]", "file-group-cache"), cluster.masterEndpoint()));
            try {
                // Each later action reads the same shuffle again: its map stage is skipped.
                JavaRDD<String> rows = ShuffleJobs.jsc(spark)
                        .parallelize(values, 4)
                        .mapToPair(v -> new Tuple2<>(v % KEYS, (long) v))
                        .reduceByKey(Long::sum, REDUCERS)
                        .map(t -> t._1 + "=" + t._2);
                long[] before = client().fileGroupLookupsAndHits();
                assertEquals(expected, Checksum.of(rows));
                long[] first = client().fileGroupLookupsAndHits();
                assertEquals(REDUCERS, first[0] - before[0], "every reduce task read all maps of its partition");
                assertEquals(REDUCERS - 1, first[1] - before[1], "one question to the driver for the 40 tasks");

                // The same epoch: the shuffle is read again from what the executor kept.
                assertEquals(expected, Checksum.of(rows));
                long[] again = client().fileGroupLookupsAndHits();
                assertEquals(REDUCERS, again[1] - first[1], "no question at all under the same epoch");

                // Spark raises the epoch (a lost output, a rerun): the next read asks once more.
                ((MapOutputTrackerMaster) SparkEnv.get().mapOutputTracker()).incrementEpoch();
                assertEquals(expected, Checksum.of(rows));
                long[] raised = client().fileGroupLookupsAndHits();
                assertEquals(REDUCERS, raised[0] - again[0]);
                assertEquals(REDUCERS - 1, raised[1] - again[1], "one question again under the new epoch");
            } finally {
                spark.stop();
            }
        }
    }
}
