package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.server.admin.AdminJson;
import io.estuary.server.admin.AdminViews;
import io.estuary.testing.process.WorkerProcesses;
import io.estuary.worker.MiniCluster;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * Workers far smaller than what is pushed at them: 64 MiB of buffer each (in a JVM whose direct memory is capped
 * at 160 MiB) against 2,048 partitions with two copies each, so their flush buffers would want 2 GiB and the data
 * is 3x the memory of each. Back-pressure must pause and resume the pushes, never fail one, never run out of
 * memory, and lose or double nothing.
 */
class WorkerMemoryPressureTest {
    static final int MAPS = 8;
    /**
     * How far above its limit the worker's tracked memory ({@code MemoryTracker.peak()}) may go. The tracker refuses
     * nothing: it stops reading client connections at 85% of the limit and replication connections at 95%, so the
     * count passes 95% only by what connections had already read when they stopped. Netty stops a connection's read
     * loop as soon as reading is switched off, so that is one more socket read per connection (at most 1 MiB, the
     * receive buffers' maximum), counted twice while a primary forwards it to the replica, plus the growth of the
     * flush buffer its pushes land in (at most one 1 MiB flush buffer): 3 MiB a connection. A worker here has at
     * most four push-port connections (the Spark executors' client and the other worker's replication, each once
     * more after a reconnect): 12 MiB, and the 5% between the last watermark and the limit is extra margin.
     */
    static final long TRACKED_SLACK = 4 * (3L << 20);
    /** Scale: bench/pressure.sh runs the same test bigger through these environment variables. */
    static final int PARTITIONS = Integer.parseInt(System.getenv().getOrDefault("ESTUARY_PRESSURE_PARTITIONS", "2048"));

    static final int RECORDS_PER_MAP =
            Integer.parseInt(System.getenv().getOrDefault("ESTUARY_PRESSURE_RECORDS_PER_MAP", "100000"));

    static JavaPairRDD<Integer, String> input(SparkSession s) {
        List<Integer> seeds = new ArrayList<>();
        for (int i = 0; i < MAPS; i++) seeds.add(i);
        int records = RECORDS_PER_MAP;
        return ShuffleJobs.jsc(s).parallelize(seeds, MAPS).flatMapToPair(seed -> {
            Random r = new Random(seed);
            StringBuilder b = new StringBuilder();
            return new java.util.Iterator<Tuple2<Integer, String>>() { // generated as read: any scale fits in memory
                int i;

                @Override
                public boolean hasNext() {
                    return i < records;
                }

                @Override
                public Tuple2<Integer, String> next() {
                    b.setLength(0);
                    b.append(seed).append('-').append(i++).append('-');
                    while (b.length() < 240) b.append((char) ('a' + r.nextInt(26)));
                    return new Tuple2<>(r.nextInt(1_000_000), b.toString());
                }
            };
        });
    }

    static JavaRDD<String> rows(JavaPairRDD<Integer, String> pairs) {
        return pairs.map(kv -> kv._1() + "=" + kv._2());
    }

    @Test
    void smallWorkersPauseAndResumeAndLoseNothing() throws Exception {
        try (MiniCluster master = new MiniCluster(0, 1, new EstuaryConf());
                WorkerProcesses workers = new WorkerProcesses(
                        2,
                        master.masterEndpoint(),
                        List.of("-XX:MaxDirectMemorySize=160m"),
                        "estuary.worker.memory.maxBuffered=64m")) {
            workers.awaitRegistered(() -> master.master().state(s -> s.workers().size()));
            SparkSession spark = SparkSessions.start(
                    SparkSessions.estuary(SparkSessions.base("local[4]", "pressure"), master.masterEndpoint())
                            .set("spark.estuary.client.push.replicate", "true"));
            AtomicInteger failedTasks = new AtomicInteger();
            spark.sparkContext().addSparkListener(new SparkListener() {
                @Override
                public void onTaskEnd(SparkListenerTaskEnd e) {
                    if (!"Success".equals(String.valueOf(e.reason()))) failedTasks.incrementAndGet();
                }
            });
            try {
                Checksum expected = Checksum.of(rows(input(spark)));
                long t0 = System.nanoTime();
                Checksum got = Checksum.of(rows(input(spark).partitionBy(new HashPartitioner(PARTITIONS))));
                long ms = (System.nanoTime() - t0) / 1_000_000;
                assertEquals(expected, got, "what the reducers read must be what the maps wrote");
                assertEquals(0, failedTasks.get(), "no task may fail under memory pressure");
                for (int i = 0; i < 2; i++) {
                    String log = workers.log(i);
                    assertFalse(log.contains("OutOfMemoryError") || log.contains("OutOfDirectMemoryError"), log);
                    assertTrue(
                            log.contains("-> PAUSE_PUSH"),
                            "worker " + i + " must have paused (else the test is too " + "small to test anything)");
                    assertTrue(log.contains("-> NORMAL"), "and resumed");
                    long peakKb = peakResidentKb(workers.process(i));
                    AdminViews.Memory memory = memoryStatus(log);
                    long limit = memory.limitBytes();
                    long trackedPeak = memory.peakBytes();
                    System.out.printf(
                            "PRESSURE worker %d: %d partitions x 2 copies, %d MB pushed in all, buffer limit 64 MiB, "
                                    + "direct memory cap 160 MiB, heap 384 MiB: peak resident %d MB, tracked peak %.1f MiB of %d MiB, "
                                    + "job %d ms, %d pauses%n",
                            i,
                            PARTITIONS,
                            (long) MAPS * RECORDS_PER_MAP * 250 * 2 / 1_000_000,
                            peakKb / 1024,
                            trackedPeak / 1048576.0,
                            limit >> 20,
                            ms,
                            log.split("-> PAUSE_PUSH", -1).length - 1);
                    assertEquals(64L << 20, limit, "the limit in force");
                    assertTrue(
                            trackedPeak <= limit + TRACKED_SLACK,
                            "worker " + i + " held " + trackedPeak + " bytes at its " + "peak, more than its limit "
                                    + limit + " + " + TRACKED_SLACK);
                    // Heap (384 MiB) + direct memory cap (160 MiB) + JVM overhead: a worker that ignored its bound
                    // would
                    // have died of OutOfDirectMemoryError above, and one that leaked heap would show here.
                    assertTrue(peakKb < (384 + 160 + 200) * 1024, "peak resident " + peakKb + " kB");
                }
            } finally {
                spark.stop();
                SparkSession.clearActiveSession();
                SparkSession.clearDefaultSession();
            }
        }
    }

    /**
     * The worker's {@code memory} section of {@code /api/status} (held, limit and peak bytes), from the HTTP port its
     * log names (the test starts workers on port 0).
     */
    static AdminViews.Memory memoryStatus(String log) throws Exception {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\(fetch\\), (\\d+) \\(http\\)")
                .matcher(log);
        assertTrue(m.find(), "the worker's log names no HTTP port");
        HttpURLConnection c =
                (HttpURLConnection) new URL("http://127.0.0.1:" + m.group(1) + "/api/status").openConnection();
        // The harness's workers authenticate (the default): the admin token they derive from the shared secret.
        c.setRequestProperty(
                "Authorization",
                "Bearer " + io.estuary.testing.ClusterSecrets.adminToken(io.estuary.testing.ClusterSecrets.shared()));
        assertEquals(200, c.getResponseCode());
        try (InputStream in = c.getInputStream()) {
            return AdminJson.read(new String(in.readAllBytes(), StandardCharsets.UTF_8), AdminViews.WorkerStatus.class)
                    .memory();
        }
    }

    /** VmHWM of a process in kB: the most resident memory it ever had (0 where /proc does not tell). */
    static long peakResidentKb(Process p) throws Exception {
        Path status = Path.of("/proc/" + p.pid() + "/status");
        if (!Files.exists(status)) return 0;
        for (String line : Files.readAllLines(status)) {
            if (line.startsWith("VmHWM:"))
                return Long.parseLong(line.substring(6).replace("kB", "").trim());
        }
        return 0;
    }
}
