package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.WorkerState;
import io.estuary.testing.Waits;
import io.estuary.testing.process.WorkerProcesses;
import io.estuary.worker.MiniCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * A rolling restart: while Spark jobs with two shuffles each run back to back (replication on), every worker JVM is
 * stopped with SIGTERM (as sbin/stop-worker.sh does), waited for, and started again on its ports and disks, one at a
 * time. Every job must succeed with the output of the same job on native sort shuffle.
 */
class RollingRestartTest {
    static final int MAPS = 6;
    static final int REDUCERS = 6;

    /** Two shuffles: a groupByKey, then a reduceByKey over a new key. Maps linger so restarts hit running stages. */
    static Checksum job(SparkSession s, long mapLingerMs) {
        List<Integer> seeds = new ArrayList<>();
        for (int i = 0; i < MAPS; i++) seeds.add(i);
        JavaPairRDD<Integer, String> pairs = ShuffleJobs.jsc(s)
                .parallelize(seeds, MAPS)
                .flatMapToPair(slice -> {
                    Thread.sleep(mapLingerMs);
                    List<Tuple2<Integer, String>> out = new ArrayList<>();
                    for (int i = slice; i < 120_000; i += MAPS) {
                        out.add(new Tuple2<>((int) ((i * 2654435761L) % 7_000), "v" + i + "-payload"));
                    }
                    return out.iterator();
                });
        JavaPairRDD<Integer, Long> grouped = pairs.groupByKey(REDUCERS).mapToPair(kv -> {
            long n = 0;
            long sum = 0;
            for (String v : kv._2()) {
                n++;
                sum += v.hashCode();
            }
            return new Tuple2<>(kv._1() % 97, n * 1_000_003L + sum);
        });
        return Checksum.of(grouped.reduceByKey(Long::sum, REDUCERS).map(kv -> {
            Thread.sleep(mapLingerMs / 4);
            return kv._1() + "=" + kv._2();
        }));
    }

    @Test
    void everyWorkerRestartedOneAtATimeDuringJobs() throws Exception {
        SparkSession nat = SparkSessions.start(SparkSessions.base("local[2]", "native"));
        Checksum expected;
        try {
            expected = job(nat, 0);
        } finally {
            nat.stop();
        }
        SparkSession.clearActiveSession();
        SparkSession.clearDefaultSession();
        try (MiniCluster master = new MiniCluster(0, 1, new EstuaryConf());
                WorkerProcesses workers =
                        new WorkerProcesses(3, master.masterEndpoint(), "estuary.worker.shutdown.timeout=15s")) {
            workers.awaitRegistered(() -> master.master().state(s -> s.workers().size()));
            SparkSession spark = SparkSessions.start(
                    SparkSessions.estuary(SparkSessions.base("local[2,4]", "rolling-restart"), master.masterEndpoint())
                            .set("spark.estuary.client.push.replicate", "true")
                            .set("spark.estuary.client.push.bufferSize", "16k"));
            AtomicInteger reruns = new AtomicInteger();
            AtomicInteger tasksEnded = new AtomicInteger();
            spark.sparkContext().addSparkListener(new SparkListener() {
                @Override
                public void onStageSubmitted(SparkListenerStageSubmitted e) {
                    if (e.stageInfo().attemptNumber() > 0) reruns.incrementAndGet();
                }

                @Override
                public void onTaskEnd(SparkListenerTaskEnd e) {
                    tasksEnded.incrementAndGet();
                }
            });
            try {
                AtomicBoolean restartsDone = new AtomicBoolean();
                CompletableFuture<Void> restarts = CompletableFuture.runAsync(() -> {
                    try {
                        // The first job is under way: a map has pushed its output, the others still run.
                        Waits.waitFor(() -> tasksEnded.get() > 0, 120_000, "a task of the first job ends");
                        for (int i = 0; i < workers.size(); i++) {
                            long t0 = System.currentTimeMillis();
                            int code = workers.stop(i);
                            long stopped = System.currentTimeMillis();
                            workers.restart(i, false);
                            String id = workers.workerId(i);
                            // Back when the master holds it ACTIVE again (it registered afresh after SHUTTING_DOWN).
                            Waits.waitFor(
                                    () -> master.master()
                                            .state(s -> s.worker(id) != null
                                                    && s.workerState(id) == WorkerState.WORKER_ACTIVE),
                                    60_000,
                                    id + " comes back ACTIVE");
                            System.out.println(
                                    "ROLLING RESTART: worker " + i + " stopped in " + (stopped - t0) + " ms (exit "
                                            + code + "), back after " + (System.currentTimeMillis() - t0) + " ms");
                            Thread.sleep(1_500);
                        }
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    } finally {
                        restartsDone.set(true);
                    }
                });
                int jobs = 0;
                while (!restartsDone.get() || jobs < 2) {
                    Checksum got =
                            CompletableFuture.supplyAsync(() -> job(spark, 600)).get(3, TimeUnit.MINUTES);
                    jobs++;
                    assertEquals(expected, got, "job " + jobs);
                }
                restarts.get(1, TimeUnit.MINUTES);
                for (int i = 0; i < workers.size(); i++) {
                    assertTrue(workers.log(i).contains("Graceful stop:"), "worker " + i + " did not stop gracefully");
                }
                System.out.println(
                        "ROLLING RESTART: " + jobs + " jobs, 0 failed, output correct; stage reruns " + reruns.get());
            } finally {
                spark.stop();
                SparkSession.clearActiveSession();
                SparkSession.clearDefaultSession();
            }
        }
    }
}
