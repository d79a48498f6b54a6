package io.estuary.client;

import static io.estuary.client.FramedRecords.*;
import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.read.ShuffleBatchReader;
import io.estuary.client.read.ShuffleDataLostException;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.config.WorkerConfig;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The reader's fetch streams against a real worker (in-process, on loopback), replication off so that no other
 * copy can hide a mistake: streams the worker dropped while the reader was busy are opened again where they stopped;
 * readers closed early give their streams back at once, so more of them than a connection may hold all read; and a
 * copy that delivers a chunk and then fails every time is given up within its retry budget instead of looping.
 * Every read is checked against what was written (count and order-independent checksum).
 */
class FetchStreamsTest {
    private static final long WAIT_MS = 60_000;

    /** A cluster of one worker, a driver and an executor client; closed together. */
    private static final class Setup implements AutoCloseable {
        final MiniCluster cluster;
        final EstuaryConf conf;
        final ShuffleClient client;
        final LifecycleManager lifecycle;

        Setup(EstuaryConf workerConf) throws Exception {
            cluster = new MiniCluster(1, 1, workerConf.set(WorkerConfig.CHUNK_SIZE, "1k"));
            conf = cluster.clientConf()
                    .set(ClientConfig.PUSH_BUFFER_SIZE, "4k")
                    .set(ClientConfig.PUSH_REPLICATE, "false")
                    // Streams are what is tested: no partition comes inline with its open.
                    .set(ClientConfig.FETCH_INLINE_MAX_BYTES, "0");
            client = new ShuffleClient(conf);
            lifecycle = new LifecycleManager("app-streams-" + System.nanoTime(), conf, "127.0.0.1");
        }

        ShuffleSpec spec(int maps, int partitions) {
            return new ShuffleSpec(lifecycle.appId(), 0, maps, partitions, "127.0.0.1", lifecycle.port());
        }

        Worker worker() {
            return cluster.workers().get(0);
        }

        /** Writes {@code records} records per map over every partition and waits for the commit: {count, checksum}. */
        long[] write(ShuffleSpec spec, int records) throws Exception {
            long[] expected = new long[2];
            for (int m = 0; m < spec.numMappers; m++) {
                MapOutputWriter w = new MapOutputWriter(client, spec, m, 0);
                for (int i = 0; i < records; i++) {
                    byte[] r = framed(m, i, 100 + (i * 13) % 300);
                    w.write(i % spec.numPartitions, r, 0, r.length);
                    expected[0]++;
                    expected[1] += hash(r);
                }
                w.finish();
            }
            client.reducerFiles(spec, 0, spec.numPartitions, 0, spec.numMappers); // waits for the commit
            return expected;
        }

        @Override
        public void close() throws Exception {
            lifecycle.close();
            client.close();
            cluster.close();
        }
    }

    /** Adds the records of one batch to {count, checksum}. */
    private static void add(ByteBuf b, long[] got) {
        while (b.isReadable()) {
            byte[] rec = new byte[4 + b.getInt(b.readerIndex())];
            b.readBytes(rec);
            got[0]++;
            got[1] += hash(rec);
        }
    }

    @Test
    void aReaderBusyPastTheStreamTimeoutReopensWhereItStoppedAndReadsExactly() throws Exception {
        try (Setup s = new Setup(new EstuaryConf().set(WorkerConfig.STREAM_TIMEOUT, "200ms"))) {
            readWhileIdlingPastTheWorkersPatience(s);
        }
    }

    /**
     * The same with the server's idle timeout shorter than the stream timeout: the worker closes the reader's idle
     * connection (its streams with it), so the next chunk request finds it closed. Not a loss either, however often.
     */
    @Test
    void aReaderBusyPastTheIdleTimeoutReopensWhereItStoppedAndReadsExactly() throws Exception {
        try (Setup s = new Setup(new EstuaryConf().set(NetworkConfig.IDLE_TIMEOUT, "200ms"))) {
            readWhileIdlingPastTheWorkersPatience(s);
        }
    }

    /** Reads while pausing, over and over, until the worker dropped the reader's stream: exact, each chunk once. */
    private static void readWhileIdlingPastTheWorkersPatience(Setup s) throws Exception {
        ShuffleSpec spec = s.spec(2, 2);
        long[] expected = s.write(spec, 1500);
        long bytesOfOneRead;
        try (ShuffleBatchReader r = new ShuffleBatchReader(s.client, spec, 0, 2, 0, 2)) {
            while (r.next() != null) {}
            bytesOfOneRead = r.bytesFetched();
        }
        long[] got = new long[2];
        int batches = 0;
        try (ShuffleBatchReader r = new ShuffleBatchReader(s.client, spec, 0, 2, 0, 2)) {
            ByteBuf b;
            while ((b = r.next()) != null) {
                add(b, got);
                // A slow computation over a few batches: the worker drops the idle stream meanwhile.
                if (++batches % 25 == 3)
                    waitFor(() -> s.worker().openFetchStreams() == 0, WAIT_MS, "the idle stream is dropped");
            }
            assertTrue(r.chunksFetched() > 20, "many chunks per partition: " + r.chunksFetched());
            assertEquals(
                    bytesOfOneRead,
                    r.bytesFetched(),
                    "each chunk fetched once: reopened streams go on where " + "they stopped");
        }
        assertTrue(batches > 50, "the reader was idle " + (batches / 25) + " times, each past the stream timeout");
        assertEquals(expected[0], got[0], "records");
        assertEquals(expected[1], got[1], "checksum");
    }

    @Test
    void readersClosedEarlyGiveTheirStreamsBackSoMoreThanTheCapAllRead() throws Exception {
        int cap = 3;
        try (Setup s = new Setup(new EstuaryConf().set(WorkerConfig.MAX_STREAMS_PER_CONNECTION, String.valueOf(cap)))) {
            ShuffleSpec spec = s.spec(2, 4);
            long[] expected = s.write(spec, 1200);
            // A limit: each reader stops after its first batch, over and over, on one connection.
            for (int i = 0; i < 4 * cap; i++) {
                int p = i % spec.numPartitions;
                try (ShuffleBatchReader r = new ShuffleBatchReader(s.client, spec, p, p + 1, 0, 2)) {
                    assertNotNull(r.next(), "partition " + p + " holds data");
                }
                waitFor(() -> s.worker().openFetchStreams() == 0, WAIT_MS, "the closed reader's stream is dropped");
            }
            assertArrayEquals(expected, readAll(s.client, spec, 0, spec.numPartitions), "then everything reads");
        }
    }

    @Test
    void aCopyThatDeliversAChunkAndThenFailsEveryTimeIsGivenUpWithinItsBudget() throws Exception {
        try (Setup s = new Setup(new EstuaryConf())) {
            ShuffleSpec spec = s.spec(2, 1);
            // Map 0 writes one batch of about 2 KB (chunk 0), map 1 one record of 100 KB (chunk 1): a frame larger than
            // the reader below takes, so its connection breaks on chunk 1 every time, after chunk 0 came in.
            MapOutputWriter w = new MapOutputWriter(s.client, spec, 0, 0);
            for (int i = 0; i < 20; i++) {
                byte[] r = framed(0, i, 100);
                w.write(0, r, 0, r.length);
            }
            w.finish();
            w = new MapOutputWriter(s.client, spec, 1, 0);
            byte[] big = framed(1, 0, 100_000);
            w.write(0, big, 0, big.length);
            w.finish();
            s.client.reducerFiles(spec, 0, 1, 0, 2);

            EstuaryConf small = s.conf.copy()
                    .set(NetworkConfig.MAX_FRAME_SIZE, "32k")
                    .set(ClientConfig.FETCH_MAX_CHUNKS_IN_FLIGHT, "1");
            try (ShuffleClient reader = new ShuffleClient(small)) {
                long t0 = System.nanoTime();
                CompletableFuture<Long> read = CompletableFuture.supplyAsync(() -> {
                    long records = 0;
                    try (ShuffleBatchReader r = new ShuffleBatchReader(reader, spec, 0, 1, 0, 2)) {
                        long[] got = new long[2];
                        for (ByteBuf b; (b = r.next()) != null; ) add(b, got);
                        records = got[0];
                    } catch (Exception e) {
                        throw new java.util.concurrent.CompletionException(e);
                    }
                    return records;
                });
                ExecutionException e = assertThrows(
                        ExecutionException.class,
                        () -> read.get(WAIT_MS, TimeUnit.MILLISECONDS),
                        "the reader ends instead of trying the copy for ever");
                long ms = (System.nanoTime() - t0) / 1_000_000;
                assertTrue(e.getCause() instanceof ShuffleDataLostException, "lost, not " + e.getCause());
                assertTrue(
                        e.getCause().getMessage().contains(ClientConfig.FETCH_RETRIES_PER_COPY.key()),
                        e.getCause().getMessage());
                System.out.printf("RETRY BUDGET: a copy failing after its first chunk given up after %d ms%n", ms);
                waitFor(() -> s.worker().openFetchStreams() == 0, WAIT_MS, "no stream is left open on the worker");
            }
        }
    }
}
