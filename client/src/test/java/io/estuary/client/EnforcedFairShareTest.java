package io.estuary.client;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.worker.MiniCluster;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Fair share enforced by the worker (issue 19): on one real worker capping each application at 8 MiB/s, a flooding
 * application whose client ignores CONGESTED (estuary.client.push.congestionMaxDelay=0) and a normal one push at once.
 * The worker holds the flooder's connections unread (counted under its user), never the normal one's, and both read
 * back exact by count and checksum. How much the flood stretched the normal pushes is measured in bench/, not here.
 */
class EnforcedFairShareTest {
    /** What one application wrote: {count, checksum}. */
    private static long[] write(ShuffleClient client, ShuffleSpec spec, int records, int size) throws Exception {
        return write(client, spec, records, size, 0);
    }

    /**
     * As {@link #write(ShuffleClient, ShuffleSpec, int, int)}; with {@code afterCongested} > 0 each map writes on until
     * the worker has told it to slow down, then that many records more: pushes that arrive while the worker deems the
     * application congested, however fast or slow this machine runs.
     */
    private static long[] write(ShuffleClient client, ShuffleSpec spec, int records, int size, int afterCongested)
            throws Exception {
        long count = 0;
        long sum = 0;
        for (int m = 0; m < spec.numMappers; m++) {
            MapOutputWriter w = client.openWriter(spec, m, 0);
            int more = -1;
            for (int i = 0; i < records || (afterCongested > 0 && more != 0 && i < 100 * records); i++) {
                if (i >= records && afterCongested > 0) {
                    if (more < 0 && w.congestedAcks() > 0) more = afterCongested;
                    if (more > 0) more--;
                }
                byte[] rec = FramedRecords.framed(spec.shuffleId * 7 + m, i, size);
                w.write(Math.floorMod(i * 5 + m, spec.numPartitions), rec, 0, rec.length);
                count++;
                sum += FramedRecords.hash(rec);
            }
            w.finish();
        }
        return new long[] {count, sum};
    }

    private static EstuaryConf executorConf(EstuaryConf conf, LifecycleManager lm) {
        return conf.copy()
                .set(AuthConfig.APPLICATION_SECRET.key(), Base64.getEncoder().encodeToString(lm.applicationSecret()));
    }

    @Test
    void aFlooderThatIgnoresCongestionIsHeldByTheWorkerAndTheOtherIsNot() throws Exception {
        EstuaryConf workers = new EstuaryConf()
                .set(WorkerConfig.CONGESTION_APP_MAX_RATE.key(), "8m")
                .set(WorkerConfig.CONGESTION_WINDOW.key(), "2s");
        try (MiniCluster cluster = new MiniCluster(1, 1, workers)) {
            EstuaryConf flooderConf = cluster.clientConf()
                    .set(ClientConfig.USER.key(), "mallory")
                    .set(ClientConfig.CONGESTION_MAX_DELAY.key(), "0ms");
            EstuaryConf calmConf = cluster.clientConf().set(ClientConfig.USER.key(), "carol");
            LifecycleManager flooder = new LifecycleManager("app-flood", flooderConf, "127.0.0.1");
            LifecycleManager calm = new LifecycleManager("app-calm", calmConf, "127.0.0.1");
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try (ShuffleClient flooding = new ShuffleClient(executorConf(flooderConf, flooder));
                    ShuffleClient steady = new ShuffleClient(executorConf(calmConf, calm))) {
                ShuffleSpec flood = new ShuffleSpec(flooder.appId(), 0, 2, 8, "127.0.0.1", flooder.port());
                // 2 maps of at least 10,000 records of 1 KiB, each writing on until told to slow down and then 4 MiB
                // more: 8 MiB pushed while congested, a second's worth at its cap.
                Future<long[]> flooded = pool.submit(() -> write(flooding, flood, 10_000, 1024, 4096));
                Future<long[]> normally = pool.submit(() -> {
                    long[] total = new long[2];
                    for (int round = 0; round < 4; round++) { // a little at a time while the flood runs
                        ShuffleSpec s = new ShuffleSpec(calm.appId(), round, 2, 4, "127.0.0.1", calm.port());
                        long[] w = write(steady, s, 200, 256);
                        long[] r = FramedRecords.readAll(steady, s, 0, s.numPartitions);
                        assertEquals(w[0], r[0], "the normal application's round " + round + ": records");
                        assertEquals(w[1], r[1], "the normal application's round " + round + ": checksum");
                        total[0] += w[0];
                        Thread.sleep(200);
                    }
                    return total;
                });
                long[] wroteFlood = flooded.get();
                assertEquals(4 * 200 * 2, normally.get()[0]);
                long[] readFlood = FramedRecords.readAll(flooding, flood, 0, flood.numPartitions);
                assertEquals(wroteFlood[0], readFlood[0], "the flooder's records read back");
                assertEquals(wroteFlood[1], readFlood[1], "the flooder's checksum");
            } finally {
                pool.shutdownNow();
                flooder.close();
                calm.close();
            }
            String metrics = scrape(cluster.workers().get(0).httpPort());
            double mallory = held(metrics, "mallory");
            assertTrue(mallory > 0, "the worker held the flooder's connections:\n" + grep(metrics));
            assertEquals(0.0, held(metrics, "carol"), "never the normal application's:\n" + grep(metrics));
        }
    }

    private static String scrape(int port) throws Exception {
        try (InputStream in = new URL("http://127.0.0.1:" + port + "/metrics").openStream()) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            for (int n; (n = in.read(buf)) > 0; ) out.write(buf, 0, n);
            return new String(out.toByteArray(), StandardCharsets.UTF_8);
        }
    }

    /** The seconds held for {@code user}; 0 when the worker has no series for it. */
    private static double held(String metrics, String user) {
        Matcher m = Pattern.compile("estuary_worker_push_held_seconds_total\\{user=\"" + user + "\",?\\} (\\S+)")
                .matcher(metrics);
        return m.find() ? Double.parseDouble(m.group(1)) : 0.0;
    }

    private static String grep(String metrics) {
        List<String> out = new ArrayList<>();
        for (String line : metrics.split("\n")) if (line.contains("held_seconds")) out.add(line);
        return String.join("\n", out);
    }
}
