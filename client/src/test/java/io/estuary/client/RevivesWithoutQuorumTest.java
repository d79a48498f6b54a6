package io.estuary.client;

import static io.estuary.client.FramedRecords.*;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.master.Master;
import io.estuary.testing.Waits;
import io.estuary.worker.MiniCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Revives without a master quorum, under load: two of three masters are stopped, the driver's master calls
 * (unregistrations, failure reports) hang for the whole master wait on every thread of its pool, and a worker dies
 * while maps push. The revived partitions are placed by the driver on the shuffle's own workers, and those revives
 * must not queue behind the hanging master calls: with a master wait of 10 minutes, revives that shared their pool
 * would wait that long, far past this test's bound of 3 minutes. The output reads back whole.
 */
class RevivesWithoutQuorumTest {
    private static final int MAPS = 4;
    private static final int PARTITIONS = 12;
    /** More than the driver's pool of master calls (8 threads). */
    private static final int HANGING_MASTER_CALLS = 12;

    @Test
    void revivesAreServedWhileEveryMasterCallHangs() throws Exception {
        try (MiniCluster cluster =
                new MiniCluster(3, 3, 1, new EstuaryConf().set(WorkerConfig.FLUSH_BUFFER_SIZE, "4k"))) {
            cluster.awaitLeader();
            EstuaryConf conf = cluster.clientConf()
                    .set(ClientConfig.PUSH_BUFFER_SIZE, "4k")
                    .set(ClientConfig.PUSH_RETRY_WAIT, "20ms")
                    .set(ClientConfig.PUSH_REPLICATE, "true")
                    .set(ClientConfig.MASTER_WAIT, "10min");
            try (ShuffleClient client = new ShuffleClient(conf);
                    LifecycleManager lifecycle =
                            new LifecycleManager("app-noquorum-" + System.nanoTime(), conf, "127.0.0.1")) {
                // Shuffles registered while the masters are up, to be unregistered while they are down.
                for (int s = 1; s <= HANGING_MASTER_CALLS; s++) {
                    ShuffleSpec spare = new ShuffleSpec(lifecycle.appId(), s, 1, 2, "127.0.0.1", lifecycle.port());
                    MapOutputWriter w = new MapOutputWriter(client, spare, 0, 0);
                    byte[] r = framed(s, 0, 40);
                    w.write(0, r, 0, r.length);
                    w.finish();
                }
                ShuffleSpec spec =
                        new ShuffleSpec(lifecycle.appId(), 0, MAPS, PARTITIONS, "127.0.0.1", lifecycle.port());
                long[] expected = new long[2];
                ExecutorService pool = Executors.newFixedThreadPool(MAPS);
                CountDownLatch half = new CountDownLatch(MAPS);
                CompletableFuture<Void> go = new CompletableFuture<>();
                List<Future<?>> maps = new ArrayList<>();
                for (int m = 0; m < MAPS; m++) {
                    int map = m;
                    List<byte[]> rows = new ArrayList<>();
                    for (int i = 0; i < 3_000; i++) rows.add(framed(map, i, 50 + (i * 13) % 200));
                    for (byte[] r : rows) {
                        expected[0]++;
                        expected[1] += hash(r);
                    }
                    maps.add(pool.submit(() -> {
                        MapOutputWriter w = new MapOutputWriter(client, spec, map, 0);
                        for (int i = 0; i < rows.size(); i++) {
                            w.write(i % PARTITIONS, rows.get(i), 0, rows.get(i).length);
                            if (i == rows.size() / 2) {
                                half.countDown();
                                go.join();
                            }
                        }
                        w.finish();
                        return null;
                    }));
                }
                half.await();
                int leader = cluster.awaitLeader();
                cluster.stopMaster(leader);
                cluster.stopMaster((leader + 1) % 3);
                // The third may have won an election before the second stopped: no quorum only once it steps down.
                Master third = cluster.master((leader + 2) % 3);
                Waits.waitFor(() -> !third.isLeader(), 60_000, "the last master steps down");
                // Every thread of the driver's master-call pool now waits for a master (up to 10 minutes).
                for (int s = 1; s <= HANGING_MASTER_CALLS; s++) lifecycle.unregisterShuffle(s);
                // The worker holding the most of shuffle 0's files (primaries among them, so pushes must revive);
                // closed as a crash: its open locations are never committed.
                cluster.workers().get(busiestWorker(cluster, lifecycle.appId())).close();
                long t0 = System.currentTimeMillis();
                go.complete(null);
                for (Future<?> f : maps) f.get(3, TimeUnit.MINUTES);
                pool.shutdown();
                long[] got = readAll(client, spec, 0, PARTITIONS);
                System.out.printf(
                        "NO-QUORUM: maps ended %d ms after the worker loss; %d partitions placed by the driver, %d "
                                + "records read back%n",
                        System.currentTimeMillis() - t0, lifecycle.reviveDriverPlacements(), got[0]);
                assertTrue(lifecycle.reviveDriverPlacements() > 0, "no revive was needed: the test tests nothing");
                assertEquals(expected[0], got[0], "records");
                assertEquals(expected[1], got[1], "checksum");
            }
        }
    }

    /** The index of the worker with the most partition files of shuffle 0 on its disk. */
    private static int busiestWorker(MiniCluster cluster, String appId) throws java.io.IOException {
        int best = 0;
        long most = -1;
        for (int i = 0; i < cluster.workers().size(); i++) {
            java.nio.file.Path dir = cluster.root()
                    .resolve("worker" + i + "-disk0")
                    .resolve(appId)
                    .resolve("0");
            long files = 0;
            if (java.nio.file.Files.isDirectory(dir)) {
                try (java.util.stream.Stream<java.nio.file.Path> p = java.nio.file.Files.list(dir)) {
                    files = p.filter(f -> f.toString().endsWith(".data")).count();
                }
            }
            if (files > most) {
                most = files;
                best = i;
            }
        }
        return best;
    }
}
