package io.estuary.bench;

import io.estuary.client.ShuffleClient;
import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.config.WorkerConfig;
import io.estuary.master.Master;
import io.estuary.worker.Worker;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

/**
 * How much a calm application's push time grows while another floods the same worker with congestion control on
 * (the timing half of the client's CongestionTest, which checks only who is told to slow down and that the data
 * reads back). A master and one worker run in this JVM. Prints the calm application's push time alone and during
 * the flood, and their ratio; with {@code bound} it also says whether the ratio stays within 5x + 3 s, the bound the
 * test used to assert. Run with bench/congestion.sh; {@code -Dbench.enforce=false} turns the worker's enforcement off,
 * {@code -Dbench.floodIgnoresCongestion=true} has the flooder's client ignore CONGESTED.
 */
public final class CongestionBenchmark {
    private CongestionBenchmark() {}

    /** Writes {@code records} records of {@code size} bytes for one map, pausing every 100; returns its push ms. */
    static long map(
            ShuffleClient client,
            ShuffleSpec spec,
            int map,
            int records,
            int size,
            long pauseMs,
            boolean untilCongested)
            throws Exception {
        MapOutputWriter w = new MapOutputWriter(client, spec, map, 0);
        byte[] framed =
                ByteBuffer.allocate(4 + size).putInt(size).put(new byte[size]).array();
        for (int i = 0; i < records || (untilCongested && w.congestedAcks() == 0 && i < records * 20); i++) {
            w.write(i % spec.numPartitions, framed, 0, framed.length);
            if (pauseMs > 0 && i % 100 == 99) Thread.sleep(pauseMs); // the calm application's pace
        }
        w.finish();
        return w.writeNanos() / 1_000_000;
    }

    public static void main(String[] args) throws Exception {
        Path root = Files.createTempDirectory("estuary-congestion-bench");
        Path secret = BenchSecrets.clusterSecretFile(root);
        Master master = new Master(BenchSecrets.server(new EstuaryConf(), secret)
                .set(MasterConfig.HOST, "127.0.0.1")
                .set(MasterConfig.PORT, "0")
                .set(MasterConfig.HTTP_PORT, "0"));
        String endpoint = "127.0.0.1:" + master.port();
        Worker worker = new Worker(BenchSecrets.server(new EstuaryConf(), secret)
                .set(WorkerConfig.HOST, "127.0.0.1")
                .set(WorkerConfig.RPC_PORT, "0")
                .set(WorkerConfig.PUSH_PORT, "0")
                .set(WorkerConfig.FETCH_PORT, "0")
                .set(WorkerConfig.HTTP_PORT, "0")
                .set(WorkerConfig.DISK_RESERVE, "0")
                .set(WorkerConfig.STORAGE_DIRS, root.resolve("worker").toString())
                .set(WorkerConfig.CONGESTION_WINDOW, "2s")
                .set(WorkerConfig.CONGESTION_APP_MAX_RATE, "4m")
                .set(WorkerConfig.CONGESTION_ENFORCE, System.getProperty("bench.enforce", "true"))
                .set(MasterConfig.ENDPOINTS, endpoint));
        try {
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (!worker.registeredWithMaster()) {
                if (System.nanoTime() > deadline) throw new IllegalStateException("the worker did not register");
                Thread.sleep(20);
            }
            EstuaryConf calmConf = BenchSecrets.application(new EstuaryConf())
                    .set(MasterConfig.ENDPOINTS, endpoint)
                    .set(ClientConfig.USER, "alice")
                    .set(ClientConfig.PUSH_REPLICATE, "false");
            EstuaryConf floodConf = BenchSecrets.application(calmConf.copy()).set(ClientConfig.USER, "mallory");
            // -Dbench.floodIgnoresCongestion=true: the flooder's client ignores CONGESTED, as a misbehaving one would.
            if (Boolean.getBoolean("bench.floodIgnoresCongestion"))
                floodConf.set(ClientConfig.CONGESTION_MAX_DELAY, "0ms");
            try (ShuffleClient calm = new ShuffleClient(calmConf);
                    ShuffleClient flood = new ShuffleClient(floodConf);
                    LifecycleManager calmDriver = new LifecycleManager("calm-bench", calmConf, "127.0.0.1");
                    LifecycleManager floodDriver = new LifecycleManager("flood-bench", floodConf, "127.0.0.1")) {
                ShuffleSpec calmSpec = new ShuffleSpec(calmDriver.appId(), 0, 2, 10, "127.0.0.1", calmDriver.port());
                ShuffleSpec floodSpec = new ShuffleSpec(floodDriver.appId(), 0, 4, 50, "127.0.0.1", floodDriver.port());
                // A warm-up shuffle first, untimed: the calm application's first pushes would otherwise time the JIT.
                map(
                        calm,
                        new ShuffleSpec(calmDriver.appId(), 1, 1, 10, "127.0.0.1", calmDriver.port()),
                        0,
                        3_000,
                        500,
                        150,
                        false);
                long alone = map(calm, calmSpec, 0, 3_000, 500, 150, false);
                Thread.sleep(2_500); // the congestion window that saw the calm application alone passes
                ExecutorService pool = Executors.newFixedThreadPool(5);
                List<Future<Long>> floods = new ArrayList<>();
                for (int m = 0; m < 4; m++) {
                    int map = m;
                    floods.add(pool.submit(() -> map(flood, floodSpec, map, 12_000, 1000, 0, true)));
                }
                long during = pool.submit(() -> map(calm, calmSpec, 1, 3_000, 500, 150, false))
                        .get();
                for (Future<Long> f : floods) f.get();
                pool.shutdown();
                long bound = 5 * alone + 3_000;
                System.out.printf(
                        "calm push time: %d ms alone, %d ms during the flood (x%.2f; %s the old test bound of %d ms)%n",
                        alone,
                        during,
                        during / (double) Math.max(1, alone),
                        during <= bound ? "within" : "OVER",
                        bound);
            }
        } finally {
            worker.close();
            master.close();
            try (Stream<Path> s = Files.walk(root)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
