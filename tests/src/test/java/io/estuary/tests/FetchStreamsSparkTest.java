package io.estuary.tests;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * Spark jobs whose reducers hold fetch streams in the ways a review found harmful, on a real worker (in this JVM, so
 * that a reducer can see when the worker dropped its stream), replication off so that no replica hides a stream
 * taken for lost: reducers busy past the worker's stream timeout, and more {@code limit(10)} queries (reducers that
 * stop after ten rows) than one connection may hold streams. Every job gives the same rows as native Spark and
 * reruns no stage (no data is taken for lost).
 */
class FetchStreamsSparkTest {
    private static final long WAIT_MS = 60_000;
    /** The worker the reducers watch (same JVM in local mode). */
    private static volatile Worker worker;

    /**
     * Partitions of about 150 KB (many 4 KB chunks: a stream stays open while its reducer works), read without
     * aggregation, so records stream out of the reader as it fetches; each reducer works after its first record until
     * the worker dropped every idle stream (its own among them), then reads the rest.
     */
    static Checksum slowReducers(SparkSession s, boolean waitForTheSweep) {
        List<Integer> seeds = new ArrayList<>();
        for (int i = 0; i < 4; i++) seeds.add(i);
        JavaPairRDD<Integer, String> pairs = ShuffleJobs.jsc(s)
                .parallelize(seeds, 4)
                .flatMapToPair(slice -> {
                    List<Tuple2<Integer, String>> out = new ArrayList<>();
                    for (int i = slice; i < 20_000; i += 4)
                        out.add(new Tuple2<>(i % 1000, "v" + i + "-payload-payload"));
                    return out.iterator();
                });
        return Checksum.of(pairs.partitionBy(new HashPartitioner(4)).mapPartitions(it -> {
            List<String> rows = new ArrayList<>();
            boolean first = true;
            while (it.hasNext()) {
                Tuple2<Integer, String> kv = it.next();
                rows.add(kv._1() + "=" + kv._2());
                if (first && waitForTheSweep) awaitIdleStreamsDropped();
                first = false;
            }
            return rows.iterator();
        }));
    }

    /** A slow computation: returns once the worker holds no stream (each idle one was dropped). */
    static void awaitIdleStreamsDropped() throws InterruptedException {
        waitFor(() -> worker.openFetchStreams() == 0, WAIT_MS, "the worker drops every idle stream");
    }

    static List<Row> limitQuery(SparkSession s, int i) {
        return s.range(0, 100_000, 1, 4)
                .selectExpr("id", "concat('row-', id, '-', " + i + ") as v")
                .repartition(4)
                .limit(10)
                .collectAsList();
    }

    private static SparkSession estuary(MiniCluster cluster, String name, AtomicInteger reruns) {
        SparkSession spark = SparkSessions.start(
                SparkSessions.estuary(SparkSessions.base("local[2]", name), cluster.masterEndpoint())
                        .set("spark.estuary.client.push.replicate", "false")
                        .set("spark.estuary.client.push.bufferSize", "4k")
                        // Streams are what is tested: no partition comes inline with its open.
                        .set("spark.estuary.client.fetch.inlineMaxBytes", "0"));
        spark.sparkContext().addSparkListener(new SparkListener() {
            @Override
            public void onStageSubmitted(SparkListenerStageSubmitted e) {
                if (e.stageInfo().attemptNumber() > 0) reruns.incrementAndGet();
            }
        });
        return spark;
    }

    private static void stop(SparkSession spark) {
        spark.stop();
        SparkSession.clearActiveSession();
        SparkSession.clearDefaultSession();
    }

    @Test
    void reducersBusyPastTheStreamTimeoutReadExactlyWithoutRerun() throws Exception {
        SparkSession nat = SparkSessions.start(SparkSessions.base("local[2]", "native"));
        Checksum expected;
        try {
            expected = slowReducers(nat, false);
        } finally {
            stop(nat);
        }
        EstuaryConf conf =
                new EstuaryConf().set(WorkerConfig.STREAM_TIMEOUT, "300ms").set(WorkerConfig.CHUNK_SIZE, "4k");
        try (MiniCluster cluster = new MiniCluster(1, 1, conf)) {
            worker = cluster.workers().get(0);
            AtomicInteger reruns = new AtomicInteger();
            SparkSession spark = estuary(cluster, "slow-reducers", reruns);
            try {
                assertEquals(expected, slowReducers(spark, true));
                assertEquals(0, reruns.get(), "no stream dropped while its reducer worked was taken for lost data");
                assertEquals(0, worker.openFetchStreams());
            } finally {
                stop(spark);
            }
        }
    }

    @Test
    void moreLimitQueriesThanAConnectionMayHoldStreamsAllSucceed() throws Exception {
        int cap = 3;
        int queries = 4 * cap;
        SparkSession nat = SparkSessions.start(SparkSessions.base("local[2]", "native"));
        List<Long> nativeCounts = new ArrayList<>();
        try {
            for (int i = 0; i < queries; i++)
                nativeCounts.add((long) limitQuery(nat, i).size());
        } finally {
            stop(nat);
        }
        EstuaryConf conf = new EstuaryConf()
                .set(WorkerConfig.MAX_STREAMS_PER_CONNECTION, String.valueOf(cap))
                .set(WorkerConfig.CHUNK_SIZE, "4k");
        try (MiniCluster cluster = new MiniCluster(1, 1, conf)) {
            worker = cluster.workers().get(0);
            AtomicInteger reruns = new AtomicInteger();
            SparkSession spark = estuary(cluster, "limits", reruns);
            try {
                for (int i = 0; i < queries; i++) {
                    List<Row> rows = limitQuery(spark, i);
                    assertEquals(nativeCounts.get(i).longValue(), rows.size(), "query " + i);
                    for (Row r : rows) {
                        assertEquals("row-" + r.getLong(0) + "-" + i, r.getString(1), "query " + i + " row " + r);
                    }
                }
                assertEquals(0, reruns.get(), "no stream refused as one too many was taken for lost data");
                waitFor(
                        () -> worker.openFetchStreams() == 0,
                        WAIT_MS,
                        "every reducer that stopped early closed its stream");
                assertEquals(0, worker.openFetchStreams(), "every reducer that stopped early closed its stream");
            } finally {
                stop(spark);
            }
        }
    }
}
