package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.testing.process.ProcessCluster;
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
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.shuffle.estuary.LegacyShuffleLoss;
import org.apache.spark.util.TaskCompletionListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import scala.Tuple2;

/**
 * A straggler of an older stage attempt on Spark 2.4 (issue 14, item 1; ../../tests' StageAttemptStragglerTest is
 * the same scenario on Spark 3.5), where the shaded writer orders attempts by Spark's {@code stageAttemptNumber()}.
 * An indeterminate map stage (a round-robin repartition of rows read from a shuffle in an order that differs from one
 * run of the stage before to the next) fails its first attempt on a fetch failure while one of its first-attempt
 * tasks still runs: Estuary lost the stage before it (the driver bumps its generation, as on a reader's loss report,
 * so its rerun writes a fresh generation, dealt out anew). Spark reruns the stage before it, then all of this one; the straggler, which read the first run's
 * rows, writes only once the rerun wrote, and ends before the rerun's task of the same map. Estuary must never let
 * the straggler's output be what readers read: the output equals the input, and the straggler's rows differ from
 * those of the rerun's task of its map (so reading them would change the checksum while the count agrees).
 *
 * <p>Compared with the input, not with a native run: Spark 2.4's sort shuffle keeps a map's first-written files
 * (first write wins), and on this JDK that path fails the rerun's tasks (its NioBufferedFileInputStream calls
 * DirectBuffer.cleaner(), gone since Java 9).
 */
@ExtendWith(ShadedLeakCheckExtension.class)
class LegacyStageAttemptStragglerTest {
    static final int VALUES = 40_000;
    static final int SLICES = 4;
    static final int STRAGGLER = 1;
    /** Waits of the job's tasks for each other: generous, and never a reason to fail by themselves. */
    static final long WAIT_SECONDS = 90;

    /** Set before each run; tasks run in this JVM (local mode) and see them. */
    static volatile ShuffleDependency<?, ?, ?> fetched;

    static volatile CountDownLatch rerunWrote;
    static volatile CountDownLatch stragglerEnded;
    static volatile CountDownLatch stragglerRead;
    /** The rows the straggler and the rerun's task of its map wrote. */
    static volatile Checksum stragglerRows;

    static volatile Checksum rerunRows;
    static final AtomicBoolean lostOnce = new AtomicBoolean();

    /** The job: Z (a determinate shuffle) -> A (indeterminate repartition) -> B (repartition of what the maps read). */
    static Checksum job(JavaSparkContext sc) {
        List<Integer> values = new ArrayList<>();
        for (int v = 0; v < VALUES; v++) values.add(v);
        JavaRDD<Integer> z = sc.parallelize(values, SLICES)
                .mapToPair(v -> new Tuple2<>(v, v))
                .partitionBy(new HashPartitioner(SLICES))
                .values();
        // Each attempt of the stage reads its rows in its own order, and a round-robin repartition deals rows out by
        // their order: each run deals them out differently (Spark 2.4 marks the stage INDETERMINATE).
        JavaRDD<Integer> a =
                z.mapPartitions(LegacyStageAttemptStragglerTest::inAttemptOrder).repartition(SLICES);
        fetched = shuffleBelow(a.rdd());
        JavaRDD<Integer> b =
                a.mapPartitions(LegacyStageAttemptStragglerTest::straggle).repartition(3);
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
                // A is lost, as the driver (local mode: this JVM) handles a reader's report that Estuary lost it: A's
                // next attempt writes a fresh generation and Spark reruns all of A's stage.
                if (lostOnce.compareAndSet(false, true)) LegacyShuffleLoss.lost(fetched);
                throw new FetchFailedException(
                        null, fetched.shuffleId(), -1, tc.partitionId(), "forced by the test", null);
            }
            tc.addTaskCompletionListener((TaskCompletionListener) ctx -> stragglerEnded.countDown());
            List<Integer> rows = drain(it); // the first run's rows
            stragglerRows = Checksum.ofLocal(rows);
            stragglerRead.countDown();
            rerunWrote.await(WAIT_SECONDS, TimeUnit.SECONDS);
            return rows.iterator();
        }
        List<Integer> rows = drain(it);
        if (tc.partitionId() == STRAGGLER) {
            rerunRows = Checksum.ofLocal(rows);
            stragglerEnded.await(WAIT_SECONDS, TimeUnit.SECONDS);
        } else {
            // Runs after its writer ended the map.
            tc.addTaskCompletionListener((TaskCompletionListener) ctx -> rerunWrote.countDown());
        }
        return rows.iterator();
    }

    static List<Integer> drain(Iterator<Integer> it) {
        List<Integer> rows = new ArrayList<>();
        while (it.hasNext()) rows.add(it.next());
        return rows;
    }

    /** The first shuffle below {@code rdd}. */
    static ShuffleDependency<?, ?, ?> shuffleBelow(RDD<?> rdd) {
        Deque<RDD<?>> todo = new ArrayDeque<>();
        todo.add(rdd);
        while (!todo.isEmpty()) {
            scala.collection.Iterator<Dependency<?>> deps =
                    todo.poll().dependencies().iterator();
            while (deps.hasNext()) {
                Dependency<?> d = deps.next();
                if (d instanceof ShuffleDependency) return (ShuffleDependency<?, ?, ?>) d;
                todo.add(d.rdd());
            }
        }
        throw new IllegalStateException("no shuffle below " + rdd);
    }

    /** Runs the job on a new context of {@code conf}; counts the stage attempts after the first in {@code reruns}. */
    private static Checksum run(SparkConf conf, AtomicInteger reruns) {
        lostOnce.set(false);
        rerunWrote = new CountDownLatch(1);
        stragglerRead = new CountDownLatch(1);
        stragglerEnded = new CountDownLatch(1);
        stragglerRows = null;
        rerunRows = null;
        // local[4]: one failed task that counts fails the job; the straggler's does not (its task set is a zombie).
        JavaSparkContext sc = new JavaSparkContext(conf.setMaster("local[4]"));
        try {
            sc.sc().addSparkListener(new SparkListener() {
                @Override
                public void onStageSubmitted(SparkListenerStageSubmitted e) {
                    if (e.stageInfo().attemptNumber() > 0) reruns.incrementAndGet();
                }
            });
            return job(sc);
        } finally {
            sc.stop();
        }
    }

    @Test
    void aStragglerOfTheFirstAttemptNeverBecomesTheMapsOutput() throws Exception {
        List<Integer> input = new ArrayList<>();
        for (int v = 0; v < VALUES; v++) input.add(v);
        Checksum expected = Checksum.ofLocal(input);

        try (ProcessCluster cluster = new ProcessCluster(2)) {
            AtomicInteger reruns = new AtomicInteger();
            Checksum actual = run(
                    LegacySparkShuffleTest.base("straggler")
                            .set("spark.shuffle.manager", "org.apache.spark.shuffle.estuary.EstuaryShuffleManager")
                            .set("spark.estuary.master.endpoints", cluster.masterEndpoint()),
                    reruns);
            assertTrue(reruns.get() >= 2, "the forced fetch failure reran both map stages");
            assertEquals(0, stragglerEnded.getCount(), "the straggler ended");
            System.out.println("straggler wrote " + stragglerRows + ", the rerun's task of its map " + rerunRows);
            assertNotNull(rerunRows, "the rerun ran the straggler's map");
            assertEquals(rerunRows.count, stragglerRows.count, "rows of the straggler's map in each run");
            assertNotEquals(rerunRows, stragglerRows, "the straggler read other rows than the rerun's task of its map");
            assertEquals(expected, actual, "rows with a straggler of the first attempt still running");
        }
    }
}
