package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.DiskStatus;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import io.estuary.worker.storage.Disk;
import io.estuary.worker.storage.DiskHangInjection;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * One of a worker's two storage directories hangs (every write, probe and deletion on it blocks, through the
 * file-channel layer's test hook) in the middle of a push-heavy map stage. The buffers queued for that disk would
 * hold the worker's memory, pause every connection of every application for good and keep its commits from ever
 * answering. The disk must be declared hung, what waits for it released, its partitions moved elsewhere (pushes get
 * DISK_FAILED and writers revive them), the other disks and workers serve on, commits answer with what committed,
 * and the job must finish with exactly the rows it wrote.
 */
class HungDiskTest {
    static final int MAPS = 8;
    static final int RECORDS_PER_MAP = 60_000;
    /** A normal run takes well under a minute here; a wedged one never ends. */
    static final long JOB_MINUTES = 4;

    static JavaPairRDD<Integer, String> input(SparkSession s) {
        List<Integer> seeds = new ArrayList<>();
        for (int i = 0; i < MAPS; i++) seeds.add(i);
        return ShuffleJobs.jsc(s).parallelize(seeds, MAPS).flatMapToPair(seed -> {
            Random r = new Random(seed);
            StringBuilder b = new StringBuilder();
            List<Tuple2<Integer, String>> out = new ArrayList<>();
            for (int i = 0; i < RECORDS_PER_MAP; i++) {
                b.setLength(0);
                b.append(seed).append('-').append(i).append('-');
                while (b.length() < 200) b.append((char) ('a' + r.nextInt(26)));
                out.add(new Tuple2<>(r.nextInt(1_000_000), b.toString()));
            }
            return out.iterator();
        });
    }

    @Test
    void aHungDiskIsGivenUpAndTheJobFinishesExactly() throws Exception {
        EstuaryConf conf = new EstuaryConf()
                .set(WorkerConfig.MAX_BUFFERED_BYTES, "32m")
                .set(WorkerConfig.DISK_CHECK_INTERVAL, "1s")
                .set(WorkerConfig.DISK_CHECK_TIMEOUT, "2s")
                .set(WorkerConfig.FLUSH_BUFFER_SIZE, "256k");
        try (MiniCluster cluster = new MiniCluster(2, 2, conf)) {
            Worker worker = cluster.workers().get(0);
            Disk hung = worker.storage().disks().get(0);
            Disk other = worker.storage().disks().get(1);
            SparkSession spark = SparkSessions.start(
                    SparkSessions.estuary(SparkSessions.base("local[2]", "hung-disk"), cluster.masterEndpoint())
                            .set("spark.estuary.client.push.replicate", "true"));
            AtomicInteger mapsEnded = new AtomicInteger();
            AtomicLong hungAt = new AtomicLong();
            spark.sparkContext().addSparkListener(new SparkListener() {
                @Override
                public void onTaskEnd(SparkListenerTaskEnd e) {
                    // The map stage is under way, its other maps still pushing: the disk stops answering now.
                    if (e.taskType().startsWith("ShuffleMapTask") && mapsEnded.incrementAndGet() == 1) {
                        DiskHangInjection.hang(hung.dir());
                        hungAt.set(System.nanoTime());
                    }
                }
            });
            try {
                Checksum expected = Checksum.of(input(spark).map(kv -> kv._1() + "=" + kv._2()));
                long t0 = System.nanoTime();
                CompletableFuture<Checksum> job = CompletableFuture.supplyAsync(() -> Checksum.of(
                        input(spark).partitionBy(new HashPartitioner(32)).map(kv -> kv._1() + "=" + kv._2())));
                Checksum got;
                try {
                    got = job.get(JOB_MINUTES, TimeUnit.MINUTES);
                } catch (java.util.concurrent.TimeoutException e) {
                    fail(String.format(
                            "the job did not finish within %d min (the disk hung %d s ago): worker paused %s, %d of %d "
                                    + "bytes held, %d writes waiting for the hung disk, disk %s (%s)",
                            JOB_MINUTES,
                            (System.nanoTime() - hungAt.get()) / 1_000_000_000L,
                            worker.storage().memory().paused(),
                            worker.storage().memory().held(),
                            worker.storage().memory().limit(),
                            hung.flusher().outstandingWrites(),
                            hung.status(),
                            hung.reason()));
                    return;
                }
                long jobMs = (System.nanoTime() - t0) / 1_000_000;
                assertTrue(hungAt.get() != 0, "the disk hung during the job");
                assertEquals(expected, got, "what the reducers read must be what the maps wrote");
                assertEquals(
                        DiskStatus.DISK_FAILED, hung.status(), "the hung disk was declared failed: " + hung.reason());
                assertTrue(hung.reason().contains("hangs"), hung.reason());
                assertEquals(DiskStatus.DISK_HEALTHY, other.status(), "the other disk serves on");
                assertFalse(worker.storage().memory().paused(), "the worker is not paused by the hung disk's buffers");
                System.out.printf(
                        "HUNG DISK after the fix: job exact in %d ms; disk %s declared failed (%s); %d writes still "
                                + "queued or running on it (uncounted), %d bytes held by the worker%n",
                        jobMs,
                        hung.mountPoint(),
                        hung.reason(),
                        hung.flusher().outstandingWrites(),
                        worker.storage().memory().held());
            } finally {
                DiskHangInjection.healAll();
                spark.stop();
                SparkSession.clearActiveSession();
                SparkSession.clearDefaultSession();
            }
        }
    }

    /**
     * The disk hangs after the map stage committed, once the first reducer ended and while the others read: reads of
     * its copies (stream opens and chunks, queued on or running on its reader threads) must be answered, not left
     * waiting for the disk, readers move to the replicas, the worker's other disk and its network threads serve on,
     * and the worker goes on reporting to the master, which learns the disk failed.
     */
    @Test
    void aDiskThatHangsWhileReducersReadIsReadFromTheReplicas() throws Exception {
        EstuaryConf conf = new EstuaryConf()
                .set(WorkerConfig.DISK_CHECK_INTERVAL, "1s")
                // Long enough for the reducers to reach the hung disk's copies before it is declared hung.
                .set(WorkerConfig.DISK_CHECK_TIMEOUT, "10s");
        try (MiniCluster cluster = new MiniCluster(2, 2, conf)) {
            Worker worker = cluster.workers().get(0);
            Disk hung = worker.storage().disks().get(0);
            Disk other = worker.storage().disks().get(1);
            SparkSession spark = SparkSessions.start(
                    SparkSessions.estuary(SparkSessions.base("local[2]", "hung-disk-read"), cluster.masterEndpoint())
                            .set("spark.estuary.client.push.replicate", "true")
                            // A reader must leave the hung disk because the worker answers, not because its own
                            // request timed out: with this timeout a read left waiting outlasts JOB_MINUTES.
                            .set("spark.estuary.network.rpc.timeout", "10min"));
            java.util.concurrent.atomic.AtomicBoolean armed = new java.util.concurrent.atomic.AtomicBoolean();
            AtomicInteger reducersEnded = new AtomicInteger();
            AtomicLong hungAt = new AtomicLong();
            AtomicInteger failedTasks = new AtomicInteger();
            spark.sparkContext().addSparkListener(new SparkListener() {
                @Override
                public void onTaskEnd(SparkListenerTaskEnd e) {
                    if (!armed.get()) return; // the native run
                    if (!e.taskInfo().successful()) failedTasks.incrementAndGet();
                    // Everything is committed (a reducer read its partition); the other reducers read on.
                    if (e.taskType().startsWith("ResultTask") && reducersEnded.incrementAndGet() == 1) {
                        DiskHangInjection.hang(hung.dir());
                        hungAt.set(System.nanoTime());
                    }
                }
            });
            try {
                Checksum expected = Checksum.of(input(spark).map(kv -> kv._1() + "=" + kv._2()));
                long t0 = System.nanoTime();
                armed.set(true);
                CompletableFuture<Checksum> job = CompletableFuture.supplyAsync(() -> Checksum.of(
                        input(spark).partitionBy(new HashPartitioner(32)).map(kv -> kv._1() + "=" + kv._2())));
                Checksum got;
                try {
                    got = job.get(JOB_MINUTES, TimeUnit.MINUTES);
                } catch (java.util.concurrent.TimeoutException e) {
                    fail(String.format(
                            "the job did not finish within %d min (the disk hung %d s ago): disk %s (%s), %d reads "
                                    + "queued on it",
                            JOB_MINUTES,
                            (System.nanoTime() - hungAt.get()) / 1_000_000_000L,
                            hung.status(),
                            hung.reason(),
                            hung.readers().queued()));
                    return;
                }
                long jobMs = (System.nanoTime() - t0) / 1_000_000;
                assertTrue(hungAt.get() != 0, "the disk hung during the job");
                assertEquals(expected, got, "what the reducers read must be what the maps wrote");
                assertEquals(
                        DiskStatus.DISK_FAILED, hung.status(), "the hung disk was declared failed: " + hung.reason());
                assertTrue(hung.reason().contains("hangs"), hung.reason());
                assertEquals(DiskStatus.DISK_HEALTHY, other.status(), "the other disk serves on");
                assertTrue(
                        hung.readers().givenUp() > 0,
                        "reads were waiting for the disk when it was declared hung (the case this test is about)");
                assertEquals(
                        0, hung.readers().pending(), "every read that waited for the hung disk has had its answer");
                String workerId = io.estuary.master.state.WorkerId.of(worker.address());
                io.estuary.testing.Waits.waitFor(
                        () -> cluster.master().state(st -> diskStatus(st.worker(workerId), hung.mountPoint()))
                                == DiskStatus.DISK_FAILED,
                        60_000,
                        "the worker's heartbeats go on and tell the master its disk failed");
                assertEquals(
                        io.estuary.common.protocol.WorkerState.WORKER_ACTIVE,
                        cluster.master().state(st -> st.workerState(workerId)),
                        "the worker is still active");
                System.out.printf(
                        "HUNG DISK READS: job exact in %d ms (disk hung %d ms after the job started), %d failed task "
                                + "attempts, %d reads answered when the disk was declared hung; disk %s declared "
                                + "failed (%s)%n",
                        jobMs,
                        (hungAt.get() - t0) / 1_000_000,
                        failedTasks.get(),
                        hung.readers().givenUp(),
                        hung.mountPoint(),
                        hung.reason());
            } finally {
                DiskHangInjection.healAll();
                spark.stop();
                SparkSession.clearActiveSession();
                SparkSession.clearDefaultSession();
            }
        }
    }

    private static DiskStatus diskStatus(io.estuary.common.protocol.WorkerInfo w, String mountPoint) {
        if (w == null) return null;
        for (io.estuary.common.protocol.DiskInfo d : w.getDisksList()) {
            if (d.getMountPoint().equals(mountPoint)) return d.getStatus();
        }
        return null;
    }
}
