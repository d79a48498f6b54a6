package io.estuary.client;

import static io.estuary.client.FramedRecords.*;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.read.ShuffleBatchReader;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.GetReducerFileGroupResponse;
import io.estuary.common.protocol.PartitionFiles;
import io.estuary.worker.MiniCluster;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A worker restarted gracefully (same ports, committed files kept) while the driver commits or a reducer reads,
 * without replicas to fall back on: the driver and the reader wait for it to come back instead of declaring its
 * partitions lost. Every test reads back exactly what was written (count and order-independent checksum).
 */
class WorkerRestartTest {
    private static final long DOWN_MS = 3000;

    /** A cluster of two workers, a driver and an executor client, replication off; closed together. */
    private static final class Setup implements AutoCloseable {
        final MiniCluster cluster;
        final ShuffleClient client;
        final LifecycleManager lifecycle;

        Setup() throws Exception {
            this(2);
        }

        Setup(int workers) throws Exception {
            cluster = new MiniCluster(workers, 1, new EstuaryConf());
            EstuaryConf conf = cluster.clientConf()
                    .set(ClientConfig.PUSH_BUFFER_SIZE, "4k")
                    .set(ClientConfig.PUSH_RETRY_WAIT, "20ms")
                    .set(ClientConfig.PUSH_REPLICATE, "false");
            client = new ShuffleClient(conf);
            lifecycle = new LifecycleManager("app-restart-" + System.nanoTime(), conf, "127.0.0.1");
        }

        ShuffleSpec spec(int maps, int partitions) {
            return spec(0, maps, partitions);
        }

        ShuffleSpec spec(int shuffleId, int maps, int partitions) {
            return new ShuffleSpec(lifecycle.appId(), shuffleId, maps, partitions, "127.0.0.1", lifecycle.port());
        }

        /** Stops worker 0 gracefully and starts it again DOWN_MS later, in the background; returns once it is down. */
        CompletableFuture<Void> restartWorker0() throws InterruptedException {
            CountDownLatch down = new CountDownLatch(1);
            CompletableFuture<Void> up = CompletableFuture.runAsync(() -> cluster.restartWorker(0, true, () -> {
                down.countDown();
                try {
                    Thread.sleep(DOWN_MS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
            assertTrue(down.await(60, TimeUnit.SECONDS), "worker 0 did not stop");
            return up;
        }

        @Override
        public void close() throws Exception {
            lifecycle.close();
            client.close();
            cluster.close();
        }
    }

    /** Writes {@code records} records per map over every partition; returns {count, checksum}. */
    private static long[] write(Setup s, ShuffleSpec spec, int map, int records) throws Exception {
        return write(s, spec, map, 0, records);
    }

    private static long[] write(Setup s, ShuffleSpec spec, int map, int attempt, int records) throws Exception {
        MapOutputWriter w = new MapOutputWriter(s.client, spec, map, attempt);
        long[] expected = new long[2];
        for (int i = 0; i < records; i++) {
            byte[] r = framed(map, i, 100 + (i * 13) % 300);
            w.write(i % spec.numPartitions, r, 0, r.length);
            expected[0]++;
            expected[1] += hash(r);
        }
        w.finish();
        return expected;
    }

    @Test
    void aReaderWaitsForAWorkerRestartedUnderItAndReadsEverythingOnce() throws Exception {
        try (Setup s = new Setup()) {
            int partitions = 12;
            ShuffleSpec spec = s.spec(2, partitions);
            long[] expected = new long[2];
            for (int m = 0; m < 2; m++) {
                long[] e = write(s, spec, m, 3000);
                expected[0] += e[0];
                expected[1] += e[1];
            }
            s.client.reducerFiles(spec, 0, partitions, 0, 2); // waits for the commit
            long count = 0;
            long sum = 0;
            CompletableFuture<Void> up = null;
            try (ShuffleBatchReader r = new ShuffleBatchReader(s.client, spec, 0, partitions, 0, 2)) {
                ByteBuf b;
                while ((b = r.next()) != null) {
                    while (b.isReadable()) {
                        byte[] rec = new byte[4 + b.getInt(b.readerIndex())];
                        b.readBytes(rec);
                        count++;
                        sum += hash(rec);
                    }
                    // After the first batch: both workers hold partitions not read yet, and worker 0 goes away under
                    // the
                    // reader (its open stream, if any, breaks; opening the next ones is refused until it is back).
                    if (up == null) up = s.restartWorker0();
                }
            }
            up.get(60, TimeUnit.SECONDS);
            assertEquals(expected[0], count, "records");
            assertEquals(expected[1], sum, "checksum");
        }
    }

    @Test
    void theStageEndCommitWaitsForAWorkerThatIsRestarting() throws Exception {
        try (Setup s = new Setup()) {
            int partitions = 8;
            int maps = 3;
            ShuffleSpec spec = s.spec(maps, partitions);
            long[] expected = new long[2];
            for (int m = 0; m < maps - 1; m++) {
                long[] e = write(s, spec, m, 2000);
                expected[0] += e[0];
                expected[1] += e[1];
            }
            // Worker 0 stops (committing its open files) before the last map ends, so the driver's stage-end commit
            // finds it unreachable, and it comes back a few seconds later.
            CompletableFuture<Void> up = s.restartWorker0();
            long t0 = System.nanoTime();
            write(s, spec, maps - 1, 0); // ends the last map: the driver commits
            GetReducerFileGroupResponse files = s.client.reducerFiles(spec, 0, partitions, 0, maps);
            long commitMs = (System.nanoTime() - t0) / 1_000_000;
            up.get(60, TimeUnit.SECONDS);
            System.out.printf("COMMIT OVER A RESTART: worker down %d ms, commit took %d ms%n", DOWN_MS, commitMs);
            for (PartitionFiles pf : files.getPartitionsList()) {
                assertFalse(
                        pf.getIncomplete(),
                        "partition " + pf.getPartitionId() + " has an epoch without a committed copy");
                assertTrue(pf.getEpochsCount() > 0, "partition " + pf.getPartitionId() + " has no committed epoch");
            }
            boolean onWorker0 = false;
            for (PartitionFiles pf : files.getPartitionsList()) {
                for (io.estuary.common.protocol.EpochFiles e : pf.getEpochsList()) {
                    onWorker0 |= e.getCopies(0).getWorker().getRpcPort()
                            == s.cluster.workers().get(0).address().getRpcPort();
                }
            }
            assertTrue(onWorker0, "some committed copies should be on the restarted worker");
            long[] got = readAll(s.client, spec, 0, partitions);
            assertEquals(expected[0], got[0], "records");
            assertEquals(expected[1], got[1], "checksum");
        }
    }

    /**
     * The only worker of a cluster fails a map's pushes while it restarts, so the driver avoids it for a while; the
     * next shuffle must still register (on that worker, the only one the master has), not fail for want of another.
     */
    @Test
    void aOneWorkerClusterRegistersTheNextShuffleAfterItsWorkerFailedPushes() throws Exception {
        try (Setup s = new Setup(1)) {
            int partitions = 6;
            ShuffleSpec first = s.spec(0, 2, partitions);
            long[] expected = write(s, first, 0, 0, 1000);
            CompletableFuture<long[]> duringRestart = new CompletableFuture<>();
            CompletableFuture<Void> up = CompletableFuture.runAsync(() -> s.cluster.restartWorker(0, true, () -> {
                // The second map pushes while the worker is down: its pushes fail and the driver hears of it.
                CompletableFuture.runAsync(() -> {
                    try {
                        duringRestart.complete(write(s, first, 1, 0, 1000));
                    } catch (Throwable e) {
                        duringRestart.completeExceptionally(e);
                    }
                });
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (s.lifecycle.reviveRequests() == 0 && System.nanoTime() < until) {
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
            }));
            up.get(90, TimeUnit.SECONDS);
            assertTrue(s.lifecycle.reviveRequests() > 0, "the pushes to the stopped worker were never revived");
            long[] second;
            try {
                second = duringRestart.get(60, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) { // that attempt gave up: the engine runs it again
                second = write(s, first, 1, 1, 1000);
            }
            expected[0] += second[0];
            expected[1] += second[1];
            long[] got = readAll(s.client, first, 0, partitions);
            assertEquals(expected[0], got[0], "records of the first shuffle");
            assertEquals(expected[1], got[1], "checksum of the first shuffle");

            ShuffleSpec next = s.spec(1, 1, partitions);
            long[] nextExpected = write(s, next, 0, 0, 1000);
            long[] nextGot = readAll(s.client, next, 0, partitions);
            assertEquals(nextExpected[0], nextGot[0], "records of the next shuffle");
            assertEquals(nextExpected[1], nextGot[1], "checksum of the next shuffle");
        }
    }
}
