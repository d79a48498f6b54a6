package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.testing.process.WorkerProcesses;
import io.estuary.worker.MiniCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * A Spark job whose maps push while one of three workers is stopped with SIGSTOP (alive to the master, answering
 * nothing): pushes to it move elsewhere, and at the map stage's end the driver's commit waits for it (about 30 s
 * here, three times the request timeout). Reducers must wait for that commit rather than fail their attempts on
 * the request timeout (counted with a listener: not one task may fail), and the output equals native shuffle's.
 */
class StoppedWorkerSparkJobTest {

    @Test
    void reducersWaitForACommitHeldUpByAStoppedWorkerWithoutFailingAnAttempt() throws Exception {
        Checksum expected;
        SparkSession nat = SparkSessions.start(SparkSessions.base("local[2]", "native"));
        try {
            expected = WorkerLossTest.job(nat, 0, 0);
        } finally {
            nat.stop();
            SparkSession.clearActiveSession();
            SparkSession.clearDefaultSession();
        }
        try (MiniCluster master = new MiniCluster(0, 1, new EstuaryConf());
                WorkerProcesses workers =
                        new WorkerProcesses(3, master.masterEndpoint(), "estuary.network.rpc.timeout=10s")) {
            workers.awaitRegistered(() -> master.master().state(s -> s.workers().size()));
            long victim = workers.process(0).pid();
            // local[4,4]: a task may fail 3 times before the job does, so failed attempts show in the count.
            SparkSession spark = SparkSessions.start(
                    SparkSessions.estuary(SparkSessions.base("local[4,4]", "stopped"), master.masterEndpoint())
                            .set("spark.estuary.client.push.bufferSize", "16k")
                            .set("spark.estuary.network.rpc.timeout", "10s")
                            .set("spark.estuary.client.commit.timeout", "60s")
                            .set("spark.estuary.client.commit.unreachableTimeout", "20s"));
            List<String> failed = new ArrayList<>();
            AtomicInteger mapsEnded = new AtomicInteger();
            try {
                spark.sparkContext().addSparkListener(new SparkListener() {
                    @Override
                    public void onTaskEnd(SparkListenerTaskEnd e) {
                        if (!"Success".equals(e.reason().toString())) {
                            synchronized (failed) {
                                failed.add(e.taskType() + " " + e.taskInfo().index() + ": " + e.reason());
                            }
                        }
                        // The first maps have registered the shuffle (every worker holds copies); the others are still
                        // to push.
                        if (e.taskType().startsWith("ShuffleMapTask") && mapsEnded.incrementAndGet() == 1) {
                            signal("STOP", victim);
                        }
                    }
                });
                // Maps linger 2 s before they push: the later ones push after the worker stopped.
                Checksum got = CompletableFuture.supplyAsync(() -> WorkerLossTest.job(spark, 2000, 0))
                        .get(5, TimeUnit.MINUTES);
                assertEquals(expected, got);
                synchronized (failed) {
                    assertEquals(new ArrayList<String>(), failed, "task attempts that failed");
                }
            } finally {
                signal("CONT", victim);
                spark.stop();
                SparkSession.clearActiveSession();
                SparkSession.clearDefaultSession();
            }
        }
    }

    private static void signal(String signal, long pid) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
                    .inheritIO()
                    .start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + pid + " failed");
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
