package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.testing.process.ProcessCluster;
import io.estuary.testing.process.WorkerProcesses;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import scala.Tuple2;

/**
 * Workers killed with SIGKILL (each worker is its own JVM) while a Spark job's maps push, when its maps end (the
 * driver commits), and while its reducers fetch; with replication on (the job never notices: no stage reruns) and
 * off (revive and a stage rerun). Every output is compared with the same job on native sort shuffle.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WorkerLossTest {
    static final int MAPS = 8;
    static final int REDUCERS = 8;

    private Checksum expected;
    private ProcessCluster cluster;
    private WorkerProcesses workers;
    private SparkSession spark;
    /** Stage attempts after the first: stage reruns. */
    private final AtomicInteger reruns = new AtomicInteger();

    /** Maps and reducers linger so that a worker can die while they run. */
    static Checksum job(SparkSession s, long mapLingerMs, long reduceLingerMs) {
        List<Integer> seeds = new ArrayList<>();
        for (int i = 0; i < MAPS; i++) seeds.add(i);
        JavaPairRDD<Integer, String> pairs = ShuffleJobs.jsc(s)
                .parallelize(seeds, MAPS)
                .flatMapToPair(slice -> {
                    Thread.sleep(mapLingerMs);
                    List<Tuple2<Integer, String>> out = new ArrayList<>();
                    for (int i = slice; i < 160_000; i += MAPS) {
                        out.add(new Tuple2<>((int) ((i * 2654435761L) % 9_000), "v" + i + "-payload-payload-payload"));
                    }
                    return out.iterator();
                });
        return Checksum.of(pairs.groupByKey(REDUCERS).mapPartitions(it -> {
            Thread.sleep(reduceLingerMs);
            List<String> rows = new ArrayList<>();
            while (it.hasNext()) {
                Tuple2<Integer, Iterable<String>> kv = it.next();
                List<String> vs = new ArrayList<>();
                for (String v : kv._2()) vs.add(v);
                Collections.sort(vs);
                rows.add(kv._1() + "=" + vs.size() + ":" + vs.hashCode());
            }
            return rows.iterator();
        }));
    }

    @BeforeAll
    void nativeResult() {
        SparkSession nat = SparkSessions.start(SparkSessions.base("local[2]", "native"));
        try {
            expected = job(nat, 0, 0);
        } finally {
            nat.stop();
        }
    }

    private void start(int numWorkers, boolean replicate) throws Exception {
        cluster = new ProcessCluster(numWorkers); // returns once the master knows every worker
        workers = cluster.workers();
        spark = SparkSessions.start(
                SparkSessions.estuary(SparkSessions.base("local[2,4]", "worker-loss"), cluster.masterEndpoint())
                        .set("spark.estuary.client.push.replicate", String.valueOf(replicate))
                        .set("spark.estuary.client.push.bufferSize", "16k")
                        // Killed workers never come back: waiting long for them (as for a restart) would only slow the
                        // tests down.
                        .set("spark.estuary.client.commit.unreachableTimeout", "2s")
                        .set("spark.estuary.client.fetch.unreachableTimeout", "2s"));
        reruns.set(0);
        spark.sparkContext().addSparkListener(new SparkListener() {
            @Override
            public void onStageSubmitted(SparkListenerStageSubmitted e) {
                if (e.stageInfo().attemptNumber() > 0) reruns.incrementAndGet();
            }
        });
    }

    @AfterEach
    void stop() throws Exception {
        if (spark != null) spark.stop();
        spark = null;
        SparkSession.clearActiveSession();
        SparkSession.clearDefaultSession();
        workers = null;
        if (cluster != null) cluster.close();
        cluster = null;
    }

    /** Calls {@code action} once, on the listener thread, when {@code n} tasks of the job's map stage have ended. */
    private void whenMapTasksEnded(int n, ThrowingRunnable action) {
        AtomicInteger ended = new AtomicInteger();
        spark.sparkContext().addSparkListener(new SparkListener() {
            @Override
            public void onTaskEnd(SparkListenerTaskEnd e) {
                if (e.taskType().startsWith("ShuffleMapTask") && ended.incrementAndGet() == n) run(action);
            }
        });
    }

    /** Calls {@code action} once, {@code delayMs} after the job's reduce stage (the one with parents) starts. */
    private void whenReducersRun(long delayMs, ThrowingRunnable action) {
        AtomicInteger started = new AtomicInteger();
        spark.sparkContext().addSparkListener(new SparkListener() {
            @Override
            public void onStageSubmitted(SparkListenerStageSubmitted e) {
                if (e.stageInfo().parentIds().nonEmpty() && started.incrementAndGet() == 1) {
                    CompletableFuture.runAsync(() -> {
                        sleep(delayMs);
                        run(action);
                    });
                }
            }
        });
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    private static void run(ThrowingRunnable r) {
        try {
            r.run();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private Checksum runJob(long mapLingerMs, long reduceLingerMs) throws Exception {
        return CompletableFuture.supplyAsync(() -> job(spark, mapLingerMs, reduceLingerMs))
                .get(5, TimeUnit.MINUTES);
    }

    @Test
    void killWhileMapsPushReplicated() throws Exception {
        start(3, true);
        whenMapTasksEnded(2, () -> workers.kill(0));
        assertEquals(expected, runJob(400, 0));
        assertEquals(0, reruns.get(), "with replicas a lost worker needs no stage rerun");
    }

    @Test
    void killWhileMapsPushUnreplicated() throws Exception {
        start(3, false);
        whenMapTasksEnded(2, () -> workers.kill(0));
        assertEquals(expected, runJob(400, 0));
        System.out.println("WORKER LOSS (maps pushing, no replicas): stage reruns " + reruns.get());
    }

    @Test
    void killWhenMapsEndReplicated() throws Exception {
        start(3, true);
        whenMapTasksEnded(MAPS, () -> workers.kill(1));
        assertEquals(expected, runJob(100, 0));
        assertEquals(0, reruns.get(), "with replicas a lost worker needs no stage rerun");
    }

    @Test
    void killWhenMapsEndUnreplicated() throws Exception {
        start(3, false);
        whenMapTasksEnded(MAPS, () -> workers.kill(1));
        assertEquals(expected, runJob(100, 0));
        assertTrue(reruns.get() > 0, "the lost worker's partitions can only come back by rerunning the maps");
    }

    @Test
    void killWhileReducersFetchReplicated() throws Exception {
        start(3, true);
        whenReducersRun(300, () -> workers.kill(2));
        assertEquals(expected, runJob(0, 1500));
        assertEquals(0, reruns.get(), "with replicas a lost worker needs no stage rerun");
    }

    @Test
    void killWhileReducersFetchUnreplicated() throws Exception {
        start(3, false);
        whenReducersRun(300, () -> workers.kill(2));
        assertEquals(expected, runJob(0, 1500));
        System.out.println("WORKER LOSS (reducers fetching, no replicas): stage reruns " + reruns.get());
    }

    @Test
    void workerRestartedOnItsPortsWithEmptyDisksLosesItsLocationsLoudly() throws Exception {
        start(3, false);
        whenMapTasksEnded(3, () -> {
            workers.kill(0);
            workers.restart(0, true);
        });
        assertEquals(expected, runJob(400, 0));
        System.out.println("WORKER LOSS (restarted with empty disks, no replicas): stage reruns " + reruns.get());
    }

    @Test
    void twoWorkersKilledAtOnceWithReplicas() throws Exception {
        start(4, true);
        whenReducersRun(300, () -> {
            workers.kill(0);
            workers.kill(1);
        });
        assertEquals(expected, runJob(0, 1500));
        System.out.println("WORKER LOSS (two of four killed while fetching, replicas): stage reruns " + reruns.get());
    }
}
