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
            cluster = new MiniCluster(2, 1, new EstuaryConf());
            EstuaryConf conf = cluster.clientConf()
                    .set(ClientConfig.PUSH_BUFFER_SIZE, "4k")
                    .set(ClientConfig.PUSH_RETRY_WAIT, "20ms")
                    .set(ClientConfig.PUSH_REPLICATE, "false");
            client = new ShuffleClient(conf);
            lifecycle = new LifecycleManager("app-restart-" + System.nanoTime(), conf, "127.0.0.1");
        }

        ShuffleSpec spec(int maps, int partitions) {
            return new ShuffleSpec(lifecycle.appId(), 0, maps, partitions, "127.0.0.1", lifecycle.port());
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
        MapOutputWriter w = new MapOutputWriter(s.client, spec, map, 0);
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
}
