package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.estuary.common.config.EstuaryConf;
import io.estuary.testing.Waits;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * A shuffle is registered when Spark declares it (issue 18, item 4): its slots are reserved on the workers while the
 * map tasks have not written a byte (here they are held at their start until the reservation is seen), and the maps
 * then write that reservation, not a second one. Output equal to the input.
 */
class DeclaredShuffleTest {
    static final int VALUES = 20_000;
    static final int KEYS = 97;

    /** Holds every map task at its start; tasks run in this JVM (local mode) and see it. */
    static volatile CountDownLatch release;

    static Iterator<Integer> heldAtStart(Iterator<Integer> it) throws InterruptedException {
        release.await(90, TimeUnit.SECONDS);
        return it;
    }

    private static Set<String> shufflesOn(MiniCluster cluster) {
        Set<String> keys = new HashSet<>();
        for (Worker w : cluster.workers()) keys.addAll(w.registry().shuffleKeys());
        return keys;
    }

    @Test
    void theMapsFindTheirShuffleReservedBeforeTheyWriteAndWriteThatReservation() throws Exception {
        List<Integer> values = new ArrayList<>();
        List<String> expectedRows = new ArrayList<>();
        long[] sums = new long[KEYS];
        for (int v = 0; v < VALUES; v++) {
            values.add(v);
            sums[v % KEYS] += v;
        }
        for (int k = 0; k < KEYS; k++) expectedRows.add(k + "=" + sums[k]);
        Checksum expected = Checksum.ofLocal(expectedRows);

        release = new CountDownLatch(1);
        try (MiniCluster cluster = new MiniCluster(2, 1, new EstuaryConf())) {
            SparkSession spark = SparkSessions.start(
                    SparkSessions.estuary(SparkSessions.base("local[2]", "declared"), cluster.masterEndpoint()));
            try {
                CompletableFuture<Checksum> job = CompletableFuture.supplyAsync(() -> Checksum.of(ShuffleJobs.jsc(spark)
                        .parallelize(values, 4)
                        .mapPartitions(DeclaredShuffleTest::heldAtStart)
                        .mapToPair(v -> new Tuple2<>(v % KEYS, (long) v))
                        .reduceByKey(Long::sum, 5)
                        .map(t -> t._1 + "=" + t._2)));
                Waits.waitFor(
                        () -> !shufflesOn(cluster).isEmpty() || job.isDone(),
                        "the shuffle reserved on the workers while its maps wait");
                Set<String> reserved = shufflesOn(cluster);
                assertEquals(1, reserved.size(), "reserved before any map wrote: " + reserved);
                release.countDown();
                assertEquals(expected, job.get(120, TimeUnit.SECONDS));
                assertEquals(reserved, shufflesOn(cluster), "the maps wrote the declared reservation, no other");
            } finally {
                release.countDown();
                spark.stop();
            }
        }
    }
}
