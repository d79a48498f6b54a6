package io.estuary.client;

import static io.estuary.client.FramedRecords.*;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.DiskStatus;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.master.state.WorkerId;
import io.estuary.testing.TestConfs;
import io.estuary.testing.Waits;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Disk faults on real workers on loopback: a storage directory replaced by a file (a fault that works as root,
 * unlike chmod) is probed failed and reported, the master places nothing on it, pushes move elsewhere and the
 * output reads back whole from the replicas; once it is a directory again it is used again. A full disk gets no
 * slots without being failed. Every shuffle is checked by count and an order-independent checksum.
 */
class DiskFaultTest {
    private static int nextShuffle;

    private static final class Setup implements AutoCloseable {
        final MiniCluster cluster;
        final ShuffleClient client;
        final LifecycleManager lifecycle;

        Setup(int workers, int disks) throws Exception {
            this(workers, disks, new EstuaryConf());
        }

        /** {@code extra}: settings for the masters and workers on top of the fast disk probe. */
        Setup(int workers, int disks, EstuaryConf extra) throws Exception {
            EstuaryConf overrides = extra.copy()
                    .set(WorkerConfig.DISK_CHECK_INTERVAL, "200ms")
                    .set(WorkerConfig.FLUSH_BUFFER_SIZE, "4k");
            cluster = new MiniCluster(workers, disks, overrides);
            EstuaryConf conf = cluster.clientConf()
                    .set(ClientConfig.PUSH_BUFFER_SIZE, "4k")
                    .set(ClientConfig.PUSH_RETRY_WAIT, "20ms")
                    .set(ClientConfig.PUSH_REPLICATE, "true");
            client = new ShuffleClient(conf);
            lifecycle = new LifecycleManager("app-disk-" + System.nanoTime(), conf, "127.0.0.1");
        }

        ShuffleSpec spec(int maps, int partitions) {
            return new ShuffleSpec(lifecycle.appId(), nextShuffle++, maps, partitions, "127.0.0.1", lifecycle.port());
        }

        DiskStatus masterView(WorkerAddress worker, String mountPoint) {
            return DiskFaultTest.masterView(cluster, worker, mountPoint);
        }

        /** Every location the master placed for this application so far. */
        List<PartitionLocation> locations() {
            List<PartitionLocation> out = new ArrayList<>();
            Map<Integer, List<PartitionLocation>> all = cluster.master().state(s -> s.shuffles(lifecycle.appId()));
            for (List<PartitionLocation> l : all.values()) {
                for (PartitionLocation loc : l) {
                    out.add(loc);
                    if (loc.hasPeer()) out.add(loc.getPeer());
                }
            }
            return out;
        }

        @Override
        public void close() throws Exception {
            lifecycle.close();
            client.close();
            cluster.close();
        }
    }

    /** The disk's status as the leading master knows it, or null. */
    static DiskStatus masterView(MiniCluster cluster, WorkerAddress worker, String mountPoint) {
        String id = WorkerId.of(worker);
        WorkerInfo w = cluster.master().state(s -> s.worker(id));
        if (w == null) return null;
        for (DiskInfo d : w.getDisksList()) if (d.getMountPoint().equals(mountPoint)) return d.getStatus();
        return null;
    }

    /**
     * Runs maps that write {@code records} records each over {@code partitions} partitions; {@code midway} runs once
     * every map has written half. Returns what was written: {count, checksum}.
     */
    private static long[] write(Setup s, ShuffleSpec spec, int records, Runnable midway) throws Exception {
        long[] expected = new long[2];
        ExecutorService pool = Executors.newFixedThreadPool(spec.numMappers);
        CompletableFuture<Void> go = new CompletableFuture<>();
        java.util.concurrent.CountDownLatch half = new java.util.concurrent.CountDownLatch(spec.numMappers);
        List<Future<?>> tasks = new ArrayList<>();
        for (int m = 0; m < spec.numMappers; m++) {
            int map = m;
            List<byte[]> rows = new ArrayList<>();
            for (int i = 0; i < records; i++) rows.add(framed(map + spec.shuffleId * 1000, i, 50 + (i * 13) % 200));
            for (byte[] r : rows) {
                expected[0]++;
                expected[1] += hash(r);
            }
            tasks.add(pool.submit(() -> {
                MapOutputWriter w = new MapOutputWriter(s.client, spec, map, 0);
                for (int i = 0; i < rows.size(); i++) {
                    w.write(i % spec.numPartitions, rows.get(i), 0, rows.get(i).length);
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
        if (midway != null) midway.run();
        go.complete(null);
        for (Future<?> t : tasks) t.get();
        pool.shutdown();
        return expected;
    }

    private static void assertReadsBack(Setup s, ShuffleSpec spec, long[] expected) throws Exception {
        long[] got = readAll(s.client, spec, 0, spec.numPartitions);
        assertEquals(expected[0], got[0], "records of " + spec);
        assertEquals(expected[1], got[1], "checksum of " + spec);
    }

    /** Waits (bounded) until {@code done}; returns how long it took (printed, never asserted). */
    private static long await(java.util.function.BooleanSupplier done, String what) throws InterruptedException {
        long t0 = System.currentTimeMillis();
        Waits.waitFor(done, 30_000, what);
        return System.currentTimeMillis() - t0;
    }

    private static long dataFiles(File dir) throws Exception {
        if (!dir.isDirectory()) return 0;
        try (Stream<Path> s = Files.walk(dir.toPath())) {
            return s.filter(p -> p.toString().endsWith(".data")).count();
        }
    }

    /**
     * Periodic heartbeats no test can wait for (an hour apart; the master's worker timeout longer still): whatever the
     * master learns of the disks here, the workers told it when the state changed.
     */
    private static EstuaryConf noPeriodicHeartbeats() {
        return new EstuaryConf().set(WorkerConfig.HEARTBEAT_INTERVAL, "1h").set(MasterConfig.WORKER_TIMEOUT, "2h");
    }

    @Test
    void aFailedDiskIsReportedItsPartitionsMoveTheOutputReadsBackWholeAndItIsUsedOnceItRecovers() throws Exception {
        // Without periodic heartbeats, the master knowing of the failure and the recovery at all shows they were
        // reported when the probe saw them (the promptness this test once asserted as a bound in milliseconds).
        try (Setup s = new Setup(3, 2, noPeriodicHeartbeats())) {
            Worker victim = s.cluster.workers().get(0);
            File dir = s.cluster.root().resolve("worker0-disk0").toFile().getAbsoluteFile();
            String mount = dir.getAbsolutePath();
            File moved = new File(dir.getPath() + "-moved");
            long[] detectedMs = new long[1];

            ShuffleSpec first = s.spec(6, 24);
            long[] expected = write(s, first, 3000, () -> {
                try {
                    await(
                            () -> {
                                try {
                                    return dataFiles(dir) > 0;
                                } catch (Exception e) {
                                    throw new IllegalStateException(e);
                                }
                            },
                            "the disk holds partition data before it fails");
                    // The directory goes away under the worker (as an unmounted or dead disk would): a file in its
                    // place.
                    Files.move(dir.toPath(), moved.toPath());
                    Files.write(dir.toPath(), new byte[] {1});
                    detectedMs[0] = await(
                            () -> s.masterView(victim.address(), mount) == DiskStatus.DISK_FAILED,
                            "the master knows the disk failed");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            System.out.println("DISK FAULT: failed disk known to the master after " + detectedMs[0]
                    + " ms (probe every 200 ms, no periodic heartbeat)");
            // Partitions committed on the lost disk are read from their replicas.
            assertReadsBack(s, first, expected);

            // While it is failed, the master places nothing on it, and shuffles work.
            Set<PartitionLocation> before = new HashSet<>(s.locations());
            ShuffleSpec second = s.spec(3, 24);
            long[] expected2 = write(s, second, 1000, null);
            assertReadsBack(s, second, expected2);
            int placed = 0;
            for (PartitionLocation loc : s.locations()) {
                if (before.contains(loc)) continue;
                placed++;
                assertFalse(
                        loc.getWorker().equals(victim.address())
                                && loc.getDisk().equals(mount),
                        "a slot was placed on the failed disk: " + loc);
            }
            assertTrue(placed > 0);

            // The disk comes back: probed healthy, reported, used again.
            Files.delete(dir.toPath());
            Files.move(moved.toPath(), dir.toPath());
            long recoveredMs = await(
                    () -> s.masterView(victim.address(), mount) == DiskStatus.DISK_HEALTHY,
                    "the master knows the disk recovered");
            System.out.println("DISK FAULT: recovered disk known to the master after " + recoveredMs + " ms");
            long filesBefore = dataFiles(dir);
            ShuffleSpec third = s.spec(3, 48);
            long[] expected3 = write(s, third, 2000, null);
            assertReadsBack(s, third, expected3);
            assertTrue(dataFiles(dir) > filesBefore, "the recovered disk takes partitions again");

            // A disk nobody writes to fails: only the probe can see it.
            Worker other = s.cluster.workers().get(1);
            File idle = s.cluster.root().resolve("worker1-disk1").toFile().getAbsoluteFile();
            Path aside = new File(idle.getPath() + "-moved").toPath();
            Files.move(idle.toPath(), aside);
            Files.write(idle.toPath(), new byte[] {1});
            long probedMs = await(
                    () -> s.masterView(other.address(), idle.getAbsolutePath()) == DiskStatus.DISK_FAILED,
                    "the probe finds the idle disk failed");
            System.out.println("DISK FAULT: idle failed disk found by the probe and known to the master after "
                    + probedMs + " ms");
        }
    }

    /**
     * With periodic heartbeats an hour apart (the master's worker timeout longer still), a failed disk still reaches
     * the master: the worker reports a disk's change of state at once, not at its next heartbeat.
     */
    @Test
    void aFailedDiskReachesTheMasterWithoutWaitingForTheNextHeartbeat() throws Exception {
        EstuaryConf overrides = noPeriodicHeartbeats()
                .set(WorkerConfig.DISK_CHECK_INTERVAL, "200ms")
                .set(WorkerConfig.DISK_CHECK_TIMEOUT, "1s");
        try (MiniCluster cluster = new MiniCluster(1, 2, overrides)) {
            Worker worker = cluster.workers().get(0);
            File dir = cluster.root().resolve("worker0-disk1").toFile().getAbsoluteFile();
            await(
                    () -> masterView(cluster, worker.address(), dir.getAbsolutePath()) == DiskStatus.DISK_HEALTHY,
                    "the worker registered its disks");
            Files.move(dir.toPath(), new File(dir.getPath() + "-moved").toPath());
            Files.write(dir.toPath(), new byte[] {1});
            // Bounded at 30 s, far short of the next periodic heartbeat: only the report at the change can pass.
            long ms = await(
                    () -> masterView(cluster, worker.address(), dir.getAbsolutePath()) == DiskStatus.DISK_FAILED,
                    "the master knows the disk failed without waiting for the worker's next heartbeat (1 h away)");
            System.out.println(
                    "DISK FAULT: failed disk known to the master after " + ms + " ms with heartbeats 1 h apart");
        }
    }

    @Test
    void aFullDiskGetsNoSlotsButIsNotFailed() throws Exception {
        try (Setup s = new Setup(2, 1)) {
            File dir = s.cluster.root().resolve("full-worker-disk").toFile().getAbsoluteFile();
            // Every port ephemeral, HTTP included: a fixed default port fails the test when anything else holds it.
            EstuaryConf conf = io.estuary.testing.ClusterSecrets.enable(
                            TestConfs.worker(), io.estuary.testing.ClusterSecrets.shared())
                    .set(WorkerConfig.STORAGE_DIRS, dir.getPath())
                    .set(WorkerConfig.DISK_RESERVE, String.valueOf(Long.MAX_VALUE / 2)) // more than any disk has free
                    .set(WorkerConfig.HEARTBEAT_INTERVAL, "1s")
                    .set(WorkerConfig.DISK_CHECK_INTERVAL, "200ms")
                    .set(MasterConfig.ENDPOINTS, s.cluster.masterEndpoint());
            try (Worker full = new Worker(conf)) {
                s.cluster.awaitWorkers(3);
                await(() -> s.masterView(full.address(), dir.getAbsolutePath()) != null, "the full worker reported");
                assertEquals(DiskStatus.DISK_FULL, s.masterView(full.address(), dir.getAbsolutePath()));
                ShuffleSpec spec = s.spec(3, 24);
                long[] expected = write(s, spec, 1000, null);
                assertReadsBack(s, spec, expected);
                for (PartitionLocation loc : s.locations()) {
                    assertNotEquals(full.address(), loc.getWorker(), "a slot was placed on the full disk: " + loc);
                }
                assertEquals(0, dataFiles(dir));
                assertEquals(
                        DiskStatus.DISK_FULL, s.masterView(full.address(), dir.getAbsolutePath()), "full, not failed");
            }
        }
    }
}
