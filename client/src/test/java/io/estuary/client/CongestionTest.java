package io.estuary.client;

import static io.estuary.client.FramedRecords.*;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.worker.MiniCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * One application floods a worker while another pushes at a modest pace: the worker tells the flooding one (and
 * only it) to slow down, the flooding one's writers hold their pushes back, and both read back exactly what they
 * wrote. How much the calm one's push time grows is timing, measured by bench/congestion.sh
 * (io.estuary.bench.CongestionBenchmark), never asserted here.
 */
class CongestionTest {
    /** An application: its driver, an executor client and what it wrote. */
    private static final class App implements AutoCloseable {
        final LifecycleManager driver;
        final ShuffleClient client;
        final ShuffleSpec spec;
        long count;
        long sum;
        long congestedAcks;
        long congestionHeldMs;

        App(MiniCluster cluster, String name, String user, int maps, int partitions) throws Exception {
            EstuaryConf conf =
                    cluster.clientConf().set(ClientConfig.USER, user).set(ClientConfig.PUSH_REPLICATE, "false");
            client = new ShuffleClient(conf);
            driver = new LifecycleManager(name + "-" + System.nanoTime(), conf, "127.0.0.1");
            spec = new ShuffleSpec(driver.appId(), 0, maps, partitions, "127.0.0.1", driver.port());
        }

        /**
         * Writes one map's records, pausing {@code pauseMs} every 100 records; with {@code untilCongested}, goes on past
         * {@code records} (up to 20 times as many) until a worker has told it to slow down. Returns the map's push time
         * in milliseconds: what its writer spent pushing and waiting for pushes (its engine's shuffle write time), so
         * neither the pauses nor making records count.
         */
        long map(int map, int records, int size, long pauseMs, boolean untilCongested) throws Exception {
            MapOutputWriter w = new MapOutputWriter(client, spec, map, 0);
            for (int i = 0; i < records || (untilCongested && w.congestedAcks() == 0 && i < records * 20); i++) {
                byte[] r = framed(map * 1_000_003L + i, size);
                w.write(i % spec.numPartitions, r, 0, r.length);
                synchronized (this) {
                    count++;
                    sum += hash(r);
                }
                if (pauseMs > 0 && i % 100 == 99) Thread.sleep(pauseMs);
            }
            w.finish();
            synchronized (this) {
                congestedAcks += w.congestedAcks();
                congestionHeldMs += w.congestionHeldMs();
            }
            return w.writeNanos() / 1_000_000;
        }

        void checkReadBack() throws Exception {
            long[] got = readAll(client, spec, 0, spec.numPartitions);
            assertEquals(count, got[0], "records of " + driver.appId());
            assertEquals(sum, got[1], "checksum of " + driver.appId());
        }

        @Override
        public void close() throws Exception {
            driver.close();
            client.close();
        }
    }

    @Test
    void theFloodingApplicationSlowsDownAndTheOtherIsLeftAlone() throws Exception {
        // A cap low enough that the flood passes it at once and the calm application (about 0.3 MB/s) never does.
        EstuaryConf workers = new EstuaryConf()
                .set(WorkerConfig.CONGESTION_WINDOW, "2s")
                .set(WorkerConfig.CONGESTION_APP_MAX_RATE, "4m");
        try (MiniCluster cluster = new MiniCluster(1, 1, workers);
                App flood = new App(cluster, "flood", "mallory", 4, 50);
                App calm = new App(cluster, "calm", "alice", 2, 10)) {
            // The calm application's push time alone (map 0), then while the other floods (map 1).
            long calmAloneMs = calm.map(0, 3_000, 500, 150, false); // 1.5 MB in 4.5 s
            // The flood starts at once: the calm application stays under the cap even with map 0's pushes still in
            // the worker's rate window, and its push time is measured by its own writer, so nothing waits for the
            // window to pass (it mattered for a push-time bound, which moved to bench/congestion.sh).
            ExecutorService pool = Executors.newFixedThreadPool(5);
            List<Future<Long>> floods = new ArrayList<>();
            for (int m = 0; m < 4; m++) {
                int map = m;
                floods.add(pool.submit(() -> flood.map(map, 12_000, 1000, 0, true))); // 48+ MB, fast
            }
            Future<Long> calmTime = pool.submit(() -> calm.map(1, 3_000, 500, 150, false));
            long floodMs = 0;
            for (Future<Long> f : floods) floodMs = Math.max(floodMs, f.get());
            long calmMs = calmTime.get();
            pool.shutdown();
            flood.checkReadBack();
            calm.checkReadBack();
            System.out.printf(
                    "CONGESTION: flood push time %d ms (%d congested acks, pushes held back %d ms), calm push "
                            + "time %d ms alone, %d ms during the flood (%d congested acks)%n",
                    floodMs, flood.congestedAcks, flood.congestionHeldMs, calmAloneMs, calmMs, calm.congestedAcks);
            assertTrue(flood.congestedAcks > 0, "the flooding application must be told to slow down");
            assertTrue(flood.congestionHeldMs >= 50, "the flooding application's writers must hold their pushes back");
            assertEquals(0, calm.congestedAcks, "the calm application must be left alone");
        }
    }
}
