package io.estuary.client;

import static io.estuary.client.FramedRecords.*;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.batch.BatchCodec;
import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.read.ShuffleDataLostException;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.LocationTable;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.config.WorkerConfig;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.client.TransportClient;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import io.estuary.worker.storage.DiskHangInjection;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The engine-neutral client against real workers that die, split and lie: revive, splits over many epochs, the
 * bounded cost of a revive storm, and end-to-end integrity catching forged and dropped batches. Every test reads
 * back exactly what was written (count and order-independent checksum) or fails loudly.
 */
class WorkerLossRecoveryTest {
    private static int nextShuffle;

    /** A cluster, a driver and an executor client, closed together. */
    private static final class Setup implements AutoCloseable {
        final MiniCluster cluster;
        final ShuffleClient client;
        final LifecycleManager lifecycle;

        Setup(int workers, EstuaryConf overrides, boolean replicate) throws Exception {
            cluster = new MiniCluster(workers, 1, overrides);
            EstuaryConf conf = cluster.clientConf()
                    .set(ClientConfig.PUSH_BUFFER_SIZE, "4k")
                    .set(ClientConfig.PUSH_RETRY_WAIT, "20ms")
                    .set(ClientConfig.PUSH_REPLICATE, String.valueOf(replicate))
                    // The workers here die for good: waiting long for them to come back would only slow the tests down.
                    .set(ClientConfig.COMMIT_UNREACHABLE_TIMEOUT, "2s")
                    .set(ClientConfig.FETCH_UNREACHABLE_TIMEOUT, "2s");
            client = new ShuffleClient(conf);
            lifecycle = new LifecycleManager("app-loss-" + System.nanoTime(), conf, "127.0.0.1");
        }

        ShuffleSpec spec(int maps, int partitions) {
            return new ShuffleSpec(lifecycle.appId(), nextShuffle++, maps, partitions, "127.0.0.1", lifecycle.port());
        }

        @Override
        public void close() throws Exception {
            lifecycle.close();
            client.close();
            cluster.close();
        }
    }

    @Test
    void mapsSurviveAWorkerThatDiesWhileTheyPushAndAStormOfRevivesStaysCheap() throws Exception {
        // One report excludes a worker: a client that blamed a live worker would show here.
        EstuaryConf strict = new EstuaryConf().set(MasterConfig.WORKER_FAILURE_EXCLUDE_THRESHOLD, "1");
        try (Setup s = new Setup(3, strict, true)) {
            int maps = 40;
            int partitions = 30;
            ShuffleSpec spec = s.spec(maps, partitions);
            long[] expected = new long[2];
            ExecutorService pool = Executors.newFixedThreadPool(8);
            List<Future<?>> tasks = new ArrayList<>();
            CompletableFuture<Void> killed = new CompletableFuture<>();
            CountDownLatch halfPushed = new CountDownLatch(1);
            for (int m = 0; m < maps; m++) {
                int map = m;
                List<byte[]> records = new ArrayList<>();
                for (int i = 0; i < 2000; i++) records.add(framed(map, i, 100 + (i * 13) % 300));
                for (byte[] r : records) {
                    expected[0]++;
                    expected[1] += hash(r);
                }
                tasks.add(pool.submit(() -> {
                    MapOutputWriter w = new MapOutputWriter(s.client, spec, map, 0);
                    for (int i = 0; i < records.size(); i++) {
                        w.write(i % partitions, records.get(i), 0, records.get(i).length);
                        if (i == 1000) { // the first maps have pushed part of their output when the worker dies
                            halfPushed.countDown();
                            killed.join();
                        }
                    }
                    w.finish();
                    return null;
                }));
            }
            // Not a fixed sleep: on a loaded machine the shuffle may not even be placed yet, and then nothing is
            // revived.
            assertTrue(halfPushed.await(60, TimeUnit.SECONDS), "no map got halfway");
            Worker victim = s.cluster.workers().get(0);
            victim.close();
            long mastersBefore = s.cluster.master().reviveSlotRequests();
            killed.complete(null);
            for (Future<?> t : tasks) t.get();
            pool.shutdown();
            long[] got = readAll(s.client, spec, 0, partitions);
            assertEquals(expected[0], got[0], "records");
            assertEquals(expected[1], got[1], "checksum");
            // Every map failed over the same dead worker: one executor, so a few batched requests, not one per push.
            long driverRequests = s.lifecycle.reviveRequests();
            long masterRequests = s.cluster.master().reviveSlotRequests() - mastersBefore;
            System.out.printf(
                    "REVIVE STORM: %d maps over one dead worker -> %d driver requests, %d master requests%n",
                    maps, driverRequests, masterRequests);
            assertTrue(driverRequests > 0, "the dead worker's partitions must have been revived");
            assertTrue(driverRequests <= 40, "revives must be batched per executor, got " + driverRequests);
            assertTrue(
                    masterRequests <= 10, "revives must be batched per shuffle at the driver, got " + masterRequests);
            assertOnlyTheVictimWasBlamed(s, victim);
        }
    }

    /**
     * With one report enough to exclude a worker, every live worker must still be ACTIVE: a primary whose replica
     * died must not get its other replicas blamed.
     */
    private static void assertOnlyTheVictimWasBlamed(Setup s, Worker victim) {
        for (Worker w : s.cluster.workers()) {
            if (w == victim) continue;
            String id = io.estuary.master.state.WorkerId.of(w.address());
            assertEquals(
                    io.estuary.common.protocol.WorkerState.WORKER_ACTIVE,
                    s.cluster.master().state(st -> st.workerState(id)),
                    "live worker " + id + " was blamed and excluded");
        }
    }

    @Test
    void aWorkerThatDiesBeforeTheMergedPushesIsTheOnlyOneBlamed() throws Exception {
        EstuaryConf strict = new EstuaryConf().set(MasterConfig.WORKER_FAILURE_EXCLUDE_THRESHOLD, "1");
        try (Setup s = new Setup(3, strict, true)) {
            int partitions = 24;
            ShuffleSpec spec = s.spec(2, partitions);
            long count = 0;
            long sum = 0;
            MapOutputWriter[] writers = new MapOutputWriter[2];
            for (int m = 0; m < 2; m++) {
                writers[m] = new MapOutputWriter(s.client, spec, m, 0);
                for (int i = 0; i < 240; i++) { // small: everything waits for the merged pushes at the map's end
                    byte[] r = framed(m, i, 30);
                    writers[m].write(i % partitions, r, 0, r.length);
                    count++;
                    sum += hash(r);
                }
            }
            s.client.register(spec, 0, false);
            Worker victim = s.cluster.workers().get(0);
            victim.close();
            // Each merged push to a live primary holds partitions replicated to the dead worker and to the live one.
            for (MapOutputWriter w : writers) w.finish();
            long[] got = readAll(s.client, spec, 0, partitions);
            assertEquals(count, got[0]);
            assertEquals(sum, got[1]);
            assertOnlyTheVictimWasBlamed(s, victim);
        }
    }

    @Test
    void aHugePartitionSplitsOverManyEpochsAndIsReadOnce() throws Exception {
        EstuaryConf small = new EstuaryConf()
                .set(WorkerConfig.SPLIT_SOFT_SIZE, "32k")
                .set(WorkerConfig.SPLIT_HARD_SIZE, "64k")
                .set(WorkerConfig.FLUSH_BUFFER_SIZE, "4k");
        try (Setup s = new Setup(3, small, true)) {
            ShuffleSpec spec = s.spec(2, 2);
            long count = 0;
            long sum = 0;
            for (int m = 0; m < 2; m++) {
                MapOutputWriter w = new MapOutputWriter(s.client, spec, m, 0);
                for (int i = 0; i < 3000; i++) {
                    byte[] r = framed(m, i, 100);
                    w.write(0, r, 0, r.length); // everything into partition 0: about 600 KB over a 64 KB hard split
                    count++;
                    sum += hash(r);
                }
                w.finish();
            }
            LocationTable table = s.client.register(spec, 0, false);
            assertTrue(
                    table.get(0).getEpoch() >= 2,
                    "partition 0 should have split into 3+ epochs, is at epoch "
                            + table.get(0).getEpoch());
            long[] got = readAll(s.client, spec, 0, 2);
            assertEquals(count, got[0]);
            assertEquals(sum, got[1]);
        }
    }

    @Test
    void aForgedBatchAndADroppedBatchAreCaughtNotRead() throws Exception {
        try (Setup s = new Setup(2, new EstuaryConf(), false)) {
            BatchCodec codec = new BatchCodec("none");
            // Forged: a well-formed batch of the winning attempt that the map never reported.
            ShuffleSpec forged = s.spec(1, 1);
            LocationTable t1 = s.client.register(forged, 0, false);
            byte[] real = codec.encodeToArray(0, 0, 0, 1, framed(0, 0, 40), 0, 44);
            byte[] extra = codec.encodeToArray(0, 0, 1, 1, framed(0, 1, 40), 0, 44);
            push(s, t1, real);
            push(s, t1, extra);
            s.client.mapperEnd(
                    forged, t1, 0, false, 0, 0, Collections.singletonList(ShuffleRoundTripTest.stats(0, real)));
            ShuffleDataLostException e =
                    assertThrows(ShuffleDataLostException.class, () -> readAll(s.client, forged, 0, 1));
            assertTrue(e.getMessage().contains("does not add up"), e.getMessage());
            assertEquals(t1.shuffleId(), e.estuaryShuffleId());

            // Dropped: the map reports two batches; only one reached a worker (as if a worker lost an acknowledged
            // one).
            ShuffleSpec dropped = s.spec(1, 1);
            LocationTable t2 = s.client.register(dropped, 0, false);
            push(s, t2, real);
            s.client.mapperEnd(
                    dropped, t2, 0, false, 0, 0, Collections.singletonList(ShuffleRoundTripTest.stats(0, real, extra)));
            e = assertThrows(ShuffleDataLostException.class, () -> readAll(s.client, dropped, 0, 1));
            assertTrue(e.getMessage().contains("read 1 batches"), e.getMessage());
        }
    }

    private static void push(Setup s, LocationTable t, byte[] batch) throws Exception {
        TransportClient c = s.client.pushClient(t.appId(), t.get(0).getWorker());
        TransportClient.await(c.pushData(
                        t.shuffleKey(), 0, t.get(0).getEpoch(), new NettyManagedBuffer(Unpooled.wrappedBuffer(batch))))
                .release();
    }

    @Test
    void aCorruptPrimaryIsReadFromItsReplica() throws Exception {
        try (Setup s = new Setup(2, new EstuaryConf(), true)) {
            ShuffleSpec spec = s.spec(1, 1);
            MapOutputWriter w = new MapOutputWriter(s.client, spec, 0, 0);
            long count = 0;
            long sum = 0;
            for (int i = 0; i < 500; i++) {
                byte[] r = framed(0, i, 120);
                w.write(0, r, 0, r.length);
                count++;
                sum += hash(r);
            }
            w.finish();
            s.client.reducerFiles(spec, 0, 1, 0, 1); // waits for the commit: the files are complete on disk
            // Flip one bit in the middle of the primary's file.
            LocationTable t = s.client.register(spec, 0, false);
            Worker holder = workerOf(s, t);
            // The primary committed from memory; its file is written right after.
            io.estuary.testing.Waits.waitFor(
                    () -> holder.storage().cache().counters().heldBytes() == 0, "the primary's file written");
            int idx = s.cluster.workers().indexOf(holder);
            List<java.nio.file.Path> files = new ArrayList<>();
            try (java.util.stream.Stream<java.nio.file.Path> p =
                    java.nio.file.Files.walk(s.cluster.root().resolve("worker" + idx + "-disk0"))) {
                p.filter(f -> f.toString().endsWith(".data")).forEach(files::add);
            }
            assertEquals(1, files.size(), "the primary's file: " + files);
            java.nio.file.Path primary = files.get(0);
            byte[] bytes = java.nio.file.Files.readAllBytes(primary);
            bytes[bytes.length / 2] ^= 0x10;
            java.nio.file.Files.write(primary, bytes);
            long[] got = readAll(s.client, spec, 0, 1);
            assertEquals(count, got[0]);
            assertEquals(sum, got[1]);
        }
    }

    /**
     * Map {@code map} writes 600 records of 50 bytes over every partition (small partitions: copies that are held);
     * adds their count and checksum to {@code expected}. Returns the writer, not finished.
     */
    private static MapOutputWriter smallMap(Setup s, ShuffleSpec spec, int map, long[] expected) throws Exception {
        MapOutputWriter w = new MapOutputWriter(s.client, spec, map, 0);
        for (int i = 0; i < 600; i++) {
            byte[] r = framed(map, i, 50);
            w.write(i % spec.numPartitions, r, 0, r.length);
            expected[0]++;
            expected[1] += hash(r);
        }
        return w;
    }

    /** Buffered data is never flushed for its age here: a copy is held whatever the machine's speed. */
    private static EstuaryConf noAgeFlush() {
        return new EstuaryConf().set(WorkerConfig.FLUSH_MAX_AGE, "10min");
    }

    /**
     * Small replica copies are held in their workers' memory at the commit, not written (estuary.worker.replica
     * .holdInMemory): only the primaries' files are on disk. A worker that dies after the commit takes its primaries
     * with it, and their copies, served from the other worker's memory, give every record back once.
     */
    @Test
    void aPrimaryLostAfterTheCommitIsReadFromItsCopyHeldInMemory() throws Exception {
        try (Setup s = new Setup(2, noAgeFlush(), true)) {
            int partitions = 6;
            ShuffleSpec spec = s.spec(2, partitions);
            long[] expected = new long[2];
            for (int m = 0; m < 2; m++) smallMap(s, spec, m, expected).finish();
            s.client.reducerFiles(spec, 0, partitions, 0, 2); // the commit is done
            long held = 0;
            for (Worker w : s.cluster.workers())
                held += w.storage().cache().counters().heldBytes();
            assertTrue(held > 0, "the replica copies are held in memory");
            // The primaries committed from memory too, and were written right after.
            io.estuary.testing.Waits.waitFor(
                    () -> s.cluster.dataFileCount() == partitions, "only the primaries have files");
            LocationTable t = s.client.register(spec, 0, false);
            workerOf(s, t).close(); // no graceful stop: its held copies (of the other worker's primaries) go with it
            long[] got = readAll(s.client, spec, 0, partitions);
            assertArrayEquals(expected, got, "records and checksum");
        }
    }

    /**
     * A graceful stop writes the copies its worker holds in memory to their files, which the restarted worker serves:
     * the other worker may then die with its primaries, and every record still comes back once.
     */
    @Test
    void copiesHeldInMemoryAreWrittenAtAGracefulStopAndServedAfterTheRestart() throws Exception {
        try (Setup s = new Setup(2, noAgeFlush(), true)) {
            int partitions = 6;
            ShuffleSpec spec = s.spec(1, partitions);
            long[] expected = new long[2];
            smallMap(s, spec, 0, expected).finish();
            s.client.reducerFiles(spec, 0, partitions, 0, 1); // the commit is done
            io.estuary.testing.Waits.waitFor(
                    () -> s.cluster.dataFileCount() == partitions, "the primaries written, the copies held");
            Worker restarted = s.cluster.restartWorker(0, true);
            assertEquals(0, restarted.storage().cache().counters().heldBytes());
            Worker other = s.cluster.workers().get(1);
            long copiesOnOther = other.storage().cache().counters().heldBytes();
            other.close();
            // Worker 0's own files and the copies it wrote at its stop: every partition has one file on it.
            long onWorker0;
            try (java.util.stream.Stream<java.nio.file.Path> p =
                    java.nio.file.Files.walk(s.cluster.root().resolve("worker0-disk0"))) {
                onWorker0 = p.filter(f -> f.toString().endsWith(".data")).count();
            }
            assertEquals(
                    partitions,
                    onWorker0,
                    "worker 0 has a file of every partition (copies held on worker 1: " + copiesOnOther
                            + " bytes, lost with it)");
            long[] got = readAll(s.client, spec, 0, partitions);
            assertArrayEquals(expected, got, "records and checksum");
        }
    }

    /**
     * Replicated primaries commit from memory (estuary.worker.commit.fromMemory): the commit succeeds while the disk
     * of one worker hangs, and when that worker then dies before writing its primaries, every record comes back once
     * from their replicas on the other worker.
     */
    @Test
    void primariesCommittedFromMemoryAndLostBeforeTheirWriteAreReadFromTheirReplicas() throws Exception {
        try (Setup s = new Setup(2, noAgeFlush(), true)) {
            int partitions = 6;
            ShuffleSpec spec = s.spec(1, partitions);
            long[] expected = new long[2];
            MapOutputWriter w = smallMap(s, spec, 0, expected);
            java.io.File disk0 = s.cluster.root().resolve("worker0-disk0").toFile();
            DiskHangInjection.hang(disk0);
            try {
                w.finish();
                io.estuary.common.protocol.GetReducerFileGroupResponse files =
                        s.client.reducerFiles(spec, 0, partitions, 0, 1);
                int onWorker0 = 0;
                for (io.estuary.common.protocol.PartitionFiles pf : files.getPartitionsList()) {
                    assertFalse(pf.getIncomplete(), "partition " + pf.getPartitionId() + " committed");
                    for (io.estuary.common.protocol.EpochFiles e : pf.getEpochsList()) {
                        if (e.getCopies(0)
                                .getWorker()
                                .equals(s.cluster.workers().get(0).address())) onWorker0++;
                        assertEquals(2, e.getCopiesCount(), "both copies committed");
                    }
                }
                assertTrue(onWorker0 > 0, "some primaries are on the worker whose disk hangs");
                // Worker 0 dies without a graceful stop, its primaries' writes still waiting on the disk.
                CompletableFuture<Void> closed = CompletableFuture.runAsync(
                        () -> s.cluster.workers().get(0).close());
                Thread.sleep(200);
                DiskHangInjection.heal(disk0);
                closed.get(60, TimeUnit.SECONDS);
            } finally {
                DiskHangInjection.healAll();
            }
            long[] got = readAll(s.client, spec, 0, partitions);
            assertArrayEquals(expected, got, "records and checksum");
        }
    }

    private static Worker workerOf(Setup s, LocationTable t) {
        for (Worker w : s.cluster.workers()) if (w.address().equals(t.get(0).getWorker())) return w;
        throw new IllegalStateException("no worker holds " + t.get(0));
    }

    @Test
    void anAttemptThatPushesAfterTheCommitEndsQuietlyAndCountsForNothing() throws Exception {
        try (Setup s = new Setup(2, new EstuaryConf(), true)) {
            ShuffleSpec spec = s.spec(1, 3);
            MapOutputWriter first = new MapOutputWriter(s.client, spec, 0, 0);
            long count = 0;
            long sum = 0;
            for (int i = 0; i < 300; i++) {
                byte[] r = framed(0, i, 80);
                first.write(i % 3, r, 0, r.length);
                count++;
                sum += hash(r);
            }
            first.finish();
            s.client.reducerFiles(spec, 0, 3, 0, 1); // the commit is done
            // A speculative copy of the same map, late: its pushes find the stage ended; it must not fail.
            MapOutputWriter late = new MapOutputWriter(s.client, spec, 0, 1);
            for (int i = 0; i < 300; i++) {
                byte[] r = framed(7, i, 80);
                late.write(i % 3, r, 0, r.length);
            }
            late.finish();
            assertTrue(
                    late.stageEnded(), "the late attempt's pushes should have been refused as after the stage's end");
            long[] got = readAll(s.client, spec, 0, 3);
            assertEquals(count, got[0]);
            assertEquals(sum, got[1]);
        }
    }

    @Test
    void aRetriedMapWhoseReviveFindsTheStageEndedEndsQuietly() throws Exception {
        try (Setup s = new Setup(2, new EstuaryConf(), true)) {
            ShuffleSpec spec = s.spec(1, 4);
            MapOutputWriter first = new MapOutputWriter(s.client, spec, 0, 0);
            long count = 0;
            long sum = 0;
            for (int i = 0; i < 400; i++) {
                byte[] r = framed(0, i, 80);
                first.write(i % 4, r, 0, r.length);
                count++;
                sum += hash(r);
            }
            first.finish();
            s.client.reducerFiles(spec, 0, 4, 0, 1); // the commit is done
            // The worker of partition 0's primary dies: the replicas on the other worker serve readers. A retried copy
            // of the map, late, finds that worker gone; its revive is answered STAGE_ENDED by the driver.
            LocationTable t = s.client.register(spec, 0, false);
            workerOf(s, t).close();
            MapOutputWriter late = new MapOutputWriter(s.client, spec, 0, 1);
            for (int i = 0; i < 400; i++) {
                byte[] r = framed(7, i, 80);
                late.write(i % 4, r, 0, r.length);
            }
            late.finish(); // must not fail: the attempt that won already ended
            assertTrue(late.stageEnded(), "the late attempt should know the stage ended");
            assertTrue(s.lifecycle.reviveRequests() > 0, "the late attempt's pushes to the dead worker were revived");
            long[] got = readAll(s.client, spec, 0, 4);
            assertEquals(count, got[0]);
            assertEquals(sum, got[1]);
        }
    }

    @Test
    void concurrentRevivesNeverGiveTwoLocationsOneEpoch() throws Exception {
        try (Setup s = new Setup(3, new EstuaryConf(), true)) {
            ShuffleSpec spec = s.spec(1, 4);
            LocationTable t = s.client.register(spec, 0, false);
            // Many tasks report the same failed epoch of each partition at once, then report the new one as failed too.
            for (int round = 0; round < 3; round++) {
                List<CompletableFuture<io.estuary.common.protocol.PartitionLocation>> answers = new ArrayList<>();
                for (int i = 0; i < 50; i++) {
                    int p = i % 4;
                    answers.add(s.client.revive(spec, t, p, t.get(p).getEpoch(), null, i % 2 == 0));
                }
                Set<String> perEpoch = new HashSet<>();
                for (CompletableFuture<io.estuary.common.protocol.PartitionLocation> a : answers) {
                    io.estuary.common.protocol.PartitionLocation l = a.get();
                    perEpoch.add(l.getPartitionId() + "/" + l.getEpoch() + "@"
                            + l.getWorker().getRpcPort());
                }
                // One answer per partition: everyone who reported epoch e of p got the same epoch e+1 location.
                assertEquals(4, perEpoch.size(), "answers " + perEpoch);
                for (int p = 0; p < 4; p++) assertEquals(round + 1, t.get(p).getEpoch());
            }
        }
    }
}
