package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.common.config.EstuaryConf;
import io.estuary.worker.MiniCluster;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.Dependency;
import org.apache.spark.HashPartitioner;
import org.apache.spark.MapOutputTrackerMaster;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.RDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.util.TaskCompletionListener;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * A straggler of an older stage attempt (issue 14, item 1). An indeterminate map stage (a round-robin repartition
 * of rows read from a shuffle, so the rows each of its tasks reads differ from one run of the stage before to the
 * next) fails its first attempt on a fetch failure, while one of its first-attempt tasks is still running. Spark
 * reruns the stage before it and then all of this one; the straggler, which read the first run's rows, only starts
 * writing once the rerun writes, and ends before the rerun's task of the same map. Spark ignores the straggler's
 * output; Estuary must never let it be the map's output that readers read (rows doubled and dropped while the count
 * agrees). Output equal to the same job on Spark's sort shuffle and to the input.
 */
class StageAttemptStragglerTest {
    static final int VALUES = 40_000;
    static final int SLICES = 4;
    static final int STRAGGLER = 1;
    /** Waits of the job's tasks for each other: generous, and never a reason to fail by themselves. */
    static final long WAIT_SECONDS = 90;

    /** Set before each run; tasks run in this JVM (local mode) and see them. */
    static volatile int fetchedShuffleId;

    static volatile CountDownLatch rerunWrote;
    static volatile CountDownLatch stragglerEnded;
    static volatile CountDownLatch stragglerRead;
    static final AtomicBoolean lostOnce = new AtomicBoolean();

    /** The job: Z (a determinate shuffle) -> A (indeterminate repartition) -> B (repartition of what the maps read). */
    static Checksum job(SparkSession s) {
        List<Integer> values = new ArrayList<>();
        for (int v = 0; v < VALUES; v++) values.add(v);
        JavaRDD<Integer> z = ShuffleJobs.jsc(s)
                .parallelize(values, SLICES)
                .mapToPair(v -> new Tuple2<>(v, v))
                .partitionBy(new HashPartitioner(SLICES))
                .values();
        // Blocks of a shuffle arrive in any order, and a round-robin repartition deals rows out by their order: here
        // each attempt of the stage reads them in its own order, so each run deals them out differently.
        JavaRDD<Integer> a =
                z.mapPartitions(StageAttemptStragglerTest::inAttemptOrder).repartition(SLICES);
        fetchedShuffleId = shuffleIdOf(a.rdd());
        JavaRDD<Integer> b =
                a.mapPartitions(StageAttemptStragglerTest::straggle).repartition(3);
        return Checksum.of(b);
    }

    static Iterator<Integer> inAttemptOrder(Iterator<Integer> it) {
        List<Integer> rows = drain(it);
        TaskContext tc = TaskContext.get();
        Collections.shuffle(rows, new Random(tc.partitionId() * 31L + tc.stageAttemptNumber()));
        return rows.iterator();
    }

    /**
     * First attempt: the straggler reads its rows, then every other task fails fetching A (A's outputs are lost); the
     * straggler waits until a task of the rerun has written B, then writes the first run's rows. Rerun: the
     * straggler's map waits for the straggler to end, so that the straggler ends first.
     */
    static Iterator<Integer> straggle(Iterator<Integer> it) throws Exception {
        TaskContext tc = TaskContext.get();
        if (tc.stageAttemptNumber() == 0) {
            if (tc.partitionId() != STRAGGLER) {
                stragglerRead.await(WAIT_SECONDS, TimeUnit.SECONDS);
                // A's map outputs are lost (local mode: this is the driver's tracker), as when Estuary finds a
                // generation
                // lost or an executor with native shuffle files dies; then Spark reruns A's stage, and all of it.
                if (lostOnce.compareAndSet(false, true)) {
                    ((MapOutputTrackerMaster) SparkEnv.get().mapOutputTracker())
                            .unregisterAllMapAndMergeOutput(fetchedShuffleId);
                }
                throw new FetchFailedException(
                        null, fetchedShuffleId, -1L, -1, tc.partitionId(), "forced by the test", null);
            }
            tc.addTaskCompletionListener((TaskCompletionListener) ctx -> stragglerEnded.countDown());
            List<Integer> rows = drain(it); // the first run's rows
            stragglerRead.countDown();
            rerunWrote.await(WAIT_SECONDS, TimeUnit.SECONDS);
            return rows.iterator();
        }
        List<Integer> rows = drain(it);
        if (tc.partitionId() == STRAGGLER) {
            stragglerEnded.await(WAIT_SECONDS, TimeUnit.SECONDS);
        } else {
            // Runs after its writer registered and ended.
            tc.addTaskCompletionListener((TaskCompletionListener) ctx -> rerunWrote.countDown());
        }
        return rows.iterator();
    }

    static List<Integer> drain(Iterator<Integer> it) {
        List<Integer> rows = new ArrayList<>();
        while (it.hasNext()) rows.add(it.next());
        return rows;
    }

    /** The id of the first shuffle below {@code rdd}. */
    static int shuffleIdOf(RDD<?> rdd) {
        Deque<RDD<?>> todo = new ArrayDeque<>();
        todo.add(rdd);
        while (!todo.isEmpty()) {
            scala.collection.Iterator<Dependency<?>> deps =
                    todo.poll().dependencies().iterator();
            while (deps.hasNext()) {
                Dependency<?> d = deps.next();
                if (d instanceof ShuffleDependency) return ((ShuffleDependency<?, ?, ?>) d).shuffleId();
                todo.add(d.rdd());
            }
        }
        throw new IllegalStateException("no shuffle below " + rdd);
    }

    private static Checksum run(SparkSession s, AtomicInteger reruns) {
        lostOnce.set(false);
        rerunWrote = new CountDownLatch(1);
        stragglerRead = new CountDownLatch(1);
        stragglerEnded = new CountDownLatch(1);
        s.sparkContext().addSparkListener(new SparkListener() {
            @Override
            public void onStageSubmitted(SparkListenerStageSubmitted e) {
                if (e.stageInfo().attemptNumber() > 0) reruns.incrementAndGet();
            }
        });
        return job(s);
    }

    @Test
    void aStragglerOfTheFirstAttemptNeverBecomesTheMapsOutput() throws Exception {
        List<Integer> input = new ArrayList<>();
        for (int v = 0; v < VALUES; v++) input.add(v);
        Checksum expected = Checksum.ofLocal(input);

        // local[4]: one failed task that counts fails the job; the straggler's does not (its task set is a zombie).
        SparkSession nat = SparkSessions.start(SparkSessions.base("local[4]", "straggler-native"));
        Checksum nativeResult;
        AtomicInteger nativeReruns = new AtomicInteger();
        try {
            nativeResult = run(nat, nativeReruns);
        } finally {
            nat.stop();
        }
        assertEquals(expected, nativeResult, "native sort shuffle");
        assertTrue(nativeReruns.get() >= 2, "the forced fetch failure reran both map stages on native shuffle");

        try (MiniCluster cluster = new MiniCluster(2, 1, new EstuaryConf())) {
            SparkSession spark = SparkSessions.start(
                    SparkSessions.estuary(SparkSessions.base("local[4]", "straggler"), cluster.masterEndpoint()));
            try {
                AtomicInteger reruns = new AtomicInteger();
                Checksum actual = run(spark, reruns);
                assertTrue(reruns.get() >= 2, "the forced fetch failure reran both map stages");
                assertEquals(0, stragglerEnded.getCount(), "the straggler ended");
                assertEquals(nativeResult, actual, "rows with a straggler of the first attempt still running");
            } finally {
                spark.stop();
                SparkSession.clearActiveSession();
                SparkSession.clearDefaultSession();
            }
        }
    }
}
