package io.estuary.client;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.batch.BatchCodec;
import io.estuary.client.batch.BatchHeader;
import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.read.ShuffleBatchReader;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.LocationTable;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.PartitionStats;
import io.estuary.common.status.StatusCode;
import io.estuary.common.util.ShuffleKey;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.worker.MiniCluster;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Engine-neutral write and read through a real master and two real workers. */
class ShuffleRoundTripTest {
    static MiniCluster cluster;
    static ShuffleClient client;
    static LifecycleManager lifecycle;
    static int nextShuffle;

    @BeforeAll
    static void start() throws Exception {
        cluster = new MiniCluster(2, 2, new EstuaryConf());
        EstuaryConf conf =
                cluster.clientConf().set(ClientConfig.PUSH_BUFFER_SIZE, "4k").set(ClientConfig.PUSH_RETRY_WAIT, "10ms");
        client = new ShuffleClient(conf);
        lifecycle = new LifecycleManager("app-roundtrip", conf, "127.0.0.1");
    }

    @AfterAll
    static void stop() throws Exception {
        lifecycle.close();
        client.close();
        cluster.close();
    }

    private ShuffleSpec spec(int maps, int partitions) {
        return new ShuffleSpec(lifecycle.appId(), nextShuffle++, maps, partitions, "127.0.0.1", lifecycle.port());
    }

    /** Records are [int length][bytes]; the checksum is an order-independent sum of per-record hashes. */
    static final class Tally {
        long count;
        long sum;

        void add(byte[] record) {
            count++;
            sum += java.util.Arrays.hashCode(record) * 0x9E3779B97F4A7C15L;
        }
    }

    private static byte[] record(int map, int attempt, int i, int size) {
        byte[] r = new byte[size];
        new Random(map * 1_000_003L + attempt * 7919L + i).nextBytes(r);
        return r;
    }

    private static void writeRecord(MapOutputWriter w, int partition, byte[] rec) {
        byte[] framed =
                ByteBuffer.allocate(4 + rec.length).putInt(rec.length).put(rec).array();
        w.write(partition, framed, 0, framed.length);
    }

    private static Tally readAll(ShuffleSpec spec, int start, int end, int startMap, int endMap) throws Exception {
        Tally t = new Tally();
        try (ShuffleBatchReader r = new ShuffleBatchReader(client, spec, start, end, startMap, endMap)) {
            io.netty.buffer.ByteBuf b;
            while ((b = r.next()) != null) {
                while (b.isReadable()) {
                    byte[] rec = new byte[b.readInt()];
                    b.readBytes(rec);
                    t.add(rec);
                }
            }
        }
        return t;
    }

    /** What one map wrote to one partition as a single batch, as a map reports it at its end. */
    static PartitionStats stats(int partition, byte[]... batches) {
        long checksum = 0;
        long records = 0;
        for (byte[] b : batches) {
            checksum += BatchHeader.checksum(Unpooled.wrappedBuffer(b), 0) & 0xffffffffL;
            records += BatchHeader.records(Unpooled.wrappedBuffer(b), 0);
        }
        return PartitionStats.newBuilder()
                .setPartitionId(partition)
                .setBatches(batches.length)
                .setRecords(records)
                .setChecksum(checksum)
                .build();
    }

    @Test
    void everyRecordComesBackOnce() throws Exception {
        int maps = 5;
        int partitions = 13;
        ShuffleSpec spec = spec(maps, partitions);
        Tally[] expected = new Tally[partitions];
        for (int p = 0; p < partitions; p++) expected[p] = new Tally();
        for (int m = 0; m < maps; m++) {
            MapOutputWriter w = new MapOutputWriter(client, spec, m, 0);
            for (int i = 0; i < 2000; i++) {
                byte[] rec = record(m, 0, i, 1 + (i * 37) % 300);
                int p = Math.floorMod(i * 31 + m, partitions - 1); // the last partition stays empty
                writeRecord(w, p, rec);
                expected[p].add(rec);
            }
            // One record larger than the push buffer.
            byte[] big = record(m, 0, -1, 20_000);
            writeRecord(w, 0, big);
            expected[0].add(big);
            w.finish();
        }
        for (int p = 0; p < partitions; p++) {
            Tally got = readAll(spec, p, p + 1, 0, maps);
            assertEquals(expected[p].count, got.count, "records of partition " + p);
            assertEquals(expected[p].sum, got.sum, "checksum of partition " + p);
        }
        Tally all = readAll(spec, 0, partitions, 0, maps);
        long total = 0;
        for (Tally t : expected) total += t.count;
        assertEquals(total, all.count);
        // Serving those chunks was timed: workers report fetch latency per disk (load-aware placement reads it) for
        // chunks read from disk; chunks of small partitions may have come from the cache, which counts them instead.
        long fetchMicros = 0;
        long cacheHits = 0;
        for (io.estuary.worker.Worker w : cluster.workers()) {
            for (io.estuary.common.protocol.DiskInfo d : w.info().getDisksList()) fetchMicros += d.getAvgFetchMicros();
            cacheHits += w.storage().cache().counters().hits();
        }
        assertTrue(fetchMicros > 0 || cacheHits > 0, "no disk reports a fetch latency and the cache served nothing");
    }

    /**
     * Records streamed into the writer ({@code recordStream}, as Spark's serializers write them) in pieces of any
     * size, some larger than the push buffer, others filling it mid-record: each comes back whole, once; bytes
     * written between records are not data.
     */
    @Test
    void recordsStreamedIntoThePartitionBuffersComeBackWhole() throws Exception {
        int partitions = 3;
        ShuffleSpec spec = spec(1, partitions);
        Tally[] expected = new Tally[partitions];
        for (int p = 0; p < partitions; p++) expected[p] = new Tally();
        MapOutputWriter w = new MapOutputWriter(client, spec, 0, 0);
        java.io.OutputStream out = w.recordStream();
        out.write(new byte[] {1, 2, 3}); // before any record: dropped
        Random r = new Random(3);
        for (int i = 0; i < 3000; i++) {
            int p = i % partitions;
            byte[] rec = record(0, 0, i, i % 500 == 0 ? 9000 : 1 + r.nextInt(700)); // the buffer here is 4k
            byte[] framed = ByteBuffer.allocate(4 + rec.length)
                    .putInt(rec.length)
                    .put(rec)
                    .array();
            w.beginRecord(p);
            for (int at = 0; at < framed.length; ) { // in pieces, some a single byte
                int n = Math.min(framed.length - at, r.nextInt(4) == 0 ? 1 : 1 + r.nextInt(1500));
                if (n == 1) {
                    out.write(framed[at]);
                } else {
                    out.write(framed, at, n);
                }
                at += n;
                // The engine asks for memory back mid-record (a spill): the push waits until the record is whole.
                if (i % 97 == 0 && at < framed.length) assertEquals(0, w.pushBuffered());
            }
            w.endRecord();
            expected[p].add(rec);
        }
        w.finish();
        for (int p = 0; p < partitions; p++) {
            Tally got = readAll(spec, p, p + 1, 0, 1);
            assertEquals(expected[p].count, got.count, "records of partition " + p);
            assertEquals(expected[p].sum, got.sum, "checksum of partition " + p);
        }
        // The batch headers count every record too, those of records ended after a spill asked mid-record included.
        try (ShuffleBatchReader reader = new ShuffleBatchReader(client, spec, 0, partitions, 0, 1)) {
            while (reader.next() != null) {}
            assertEquals(3000, reader.recordsRead(), "records the batch headers count");
        }
    }

    /**
     * Maps of one shuffle written with zstd and with lz4 (two executors configured apart), read back by a reader
     * configured for lz4: every record once, and zstd's batches smaller on text-like records.
     */
    @Test
    void zstdAndLz4BatchesOfOneShuffleComeBackThroughRealWorkers() throws Exception {
        int partitions = 4;
        ShuffleSpec spec = spec(2, partitions);
        Tally[] expected = new Tally[partitions];
        for (int p = 0; p < partitions; p++) expected[p] = new Tally();
        long[] bytes = new long[2];
        EstuaryConf zstdConf = cluster.clientConf()
                .set(ClientConfig.PUSH_BUFFER_SIZE, "64k")
                .set(ClientConfig.COMPRESSION_CODEC, "zstd")
                .set(ClientConfig.COMPRESSION_ZSTD_LEVEL, "3");
        EstuaryConf lz4Conf = cluster.clientConf().set(ClientConfig.PUSH_BUFFER_SIZE, "64k");
        try (ShuffleClient zstdClient = new ShuffleClient(zstdConf);
                ShuffleClient lz4Client = new ShuffleClient(lz4Conf)) {
            ShuffleClient[] writers = {zstdClient, lz4Client};
            for (int m = 0; m < 2; m++) {
                MapOutputWriter w = new MapOutputWriter(writers[m], spec, m, 0);
                Random r = new Random(42); // both maps write the same records
                for (int i = 0; i < 20_000; i++) {
                    byte[] rec = new byte[40 + r.nextInt(60)];
                    for (int b = 0; b < rec.length; b++) rec[b] = (byte) ('a' + r.nextInt(8));
                    writeRecord(w, i % partitions, rec);
                    expected[i % partitions].add(rec);
                }
                for (long l : w.finish()) bytes[m] += l;
            }
        }
        for (int p = 0; p < partitions; p++) {
            Tally got = readAll(spec, p, p + 1, 0, 2);
            assertEquals(expected[p].count, got.count, "records of partition " + p);
            assertEquals(expected[p].sum, got.sum, "checksum of partition " + p);
        }
        assertTrue(bytes[0] < bytes[1] * 0.9, "zstd wrote " + bytes[0] + " bytes, lz4 " + bytes[1]);
    }

    private static java.util.Set<String> shufflesOnWorkers() {
        java.util.Set<String> keys = new java.util.HashSet<>();
        for (io.estuary.worker.Worker w : cluster.workers())
            keys.addAll(w.registry().shuffleKeys());
        return keys;
    }

    /**
     * A shuffle the engine declares is reserved on the workers before any writer asks, and its first writer writes
     * that reservation (no second one); every record comes back once.
     */
    @Test
    void aDeclaredShuffleIsReservedBeforeItsFirstWriterWhichWritesThatReservation() throws Exception {
        int maps = 3;
        int partitions = 4;
        ShuffleSpec spec = spec(maps, partitions);
        java.util.Set<String> before = shufflesOnWorkers();
        lifecycle.declareShuffle(spec.shuffleId, maps, partitions);
        io.estuary.testing.Waits.waitFor(
                () -> shufflesOnWorkers().size() > before.size(), "the declared shuffle reserved on the workers");
        java.util.Set<String> reserved = shufflesOnWorkers();
        reserved.removeAll(before);
        assertEquals(1, reserved.size(), reserved.toString());
        assertEquals(-1, lifecycle.newestGeneration(spec.shuffleId), "readers see nothing before a writer claims it");

        Tally expected = new Tally();
        for (int m = 0; m < maps; m++) {
            MapOutputWriter w = new MapOutputWriter(client, spec, m, 0);
            for (int i = 0; i < 400; i++) {
                byte[] rec = record(m, 0, i, 1 + i % 200);
                writeRecord(w, i % partitions, rec);
                expected.add(rec);
            }
            w.finish();
        }
        LocationTable table = client.register(spec, 0, false);
        assertEquals(
                ShuffleKey.of(spec.appId, table.shuffleId()),
                reserved.iterator().next());
        assertEquals(table.shuffleId(), lifecycle.newestGeneration(spec.shuffleId));
        Tally got = readAll(spec, 0, partitions, 0, maps);
        assertEquals(expected.count, got.count);
        assertEquals(expected.sum, got.sum);
        java.util.Set<String> after = shufflesOnWorkers();
        after.removeAll(before);
        assertEquals(reserved, after, "no second reservation");
    }

    /** Chunks the workers sent so far; a partition answered inline with its open counts as one. */
    private static double chunksSent() {
        double n = 0;
        for (io.estuary.worker.Worker w : cluster.workers()) {
            Double v = w.admin().metrics().registry().getSampleValue("estuary_worker_fetch_chunks_total");
            n += v == null ? 0 : v;
        }
        return n;
    }

    /**
     * A reader of many small partitions opens the next ones (estuary.client.fetch.openAhead, 4) while it reads the
     * first: their answers, inline, are sent before it asks for its second batch. Every record back once.
     */
    @Test
    void smallPartitionsAreOpenedAheadOfTheOneBeingRead() throws Exception {
        int partitions = 8;
        ShuffleSpec spec = spec(1, partitions);
        Tally expected = new Tally();
        MapOutputWriter w = new MapOutputWriter(client, spec, 0, 0);
        for (int i = 0; i < 400; i++) {
            byte[] rec = record(0, 0, i, 20 + i % 50);
            writeRecord(w, i % partitions, rec);
            expected.add(rec);
        }
        w.finish();
        client.reducerFiles(spec, 0, partitions, 0, 1); // waits for the commit
        double before = chunksSent();
        Tally got = new Tally();
        try (ShuffleBatchReader r = new ShuffleBatchReader(client, spec, 0, partitions, 0, 1)) {
            io.netty.buffer.ByteBuf b = r.next();
            io.estuary.testing.Waits.waitFor(
                    () -> chunksSent() - before >= 5, "the first partition and four opened ahead answered");
            for (; b != null; b = r.next()) {
                while (b.isReadable()) {
                    byte[] rec = new byte[b.readInt()];
                    b.readBytes(rec);
                    got.add(rec);
                }
            }
        }
        assertEquals(expected.count, got.count);
        assertEquals(expected.sum, got.sum);
    }

    @Test
    void onlyTheAttemptThatEndedFirstCounts() throws Exception {
        ShuffleSpec spec = spec(2, 3);
        Tally expected = new Tally();
        // Map 0: attempt 0 pushes and dies without ending; attempt 1 ends.
        MapOutputWriter dead = new MapOutputWriter(client, spec, 0, 0);
        for (int i = 0; i < 500; i++) writeRecord(dead, i % 3, record(0, 0, i, 100));
        dead.abort();
        // Map 1: attempt 0 ends first, then a speculative attempt 1 ends too.
        MapOutputWriter winner = new MapOutputWriter(client, spec, 1, 0);
        MapOutputWriter speculative = new MapOutputWriter(client, spec, 1, 1);
        for (int i = 0; i < 500; i++) {
            byte[] rec = record(1, 0, i, 100);
            writeRecord(winner, i % 3, rec);
            expected.add(rec);
            writeRecord(speculative, i % 3, record(1, 1, i, 100));
        }
        MapOutputWriter retry = new MapOutputWriter(client, spec, 0, 1);
        for (int i = 0; i < 300; i++) {
            byte[] rec = record(0, 1, i, 50);
            writeRecord(retry, i % 3, rec);
            expected.add(rec);
        }
        winner.finish();
        // The speculative attempt ends after the winner, but before the last map ends (so before commit).
        speculative.finish();
        retry.finish();
        Tally got = readAll(spec, 0, 3, 0, 2);
        assertEquals(expected.count, got.count);
        assertEquals(expected.sum, got.sum);
    }

    @Test
    void aBatchThatLandsTwiceIsReadOnce() throws Exception {
        ShuffleSpec spec = spec(1, 1);
        LocationTable table = client.register(spec, 0, false);
        byte[] rec = record(9, 0, 0, 64);
        byte[] framed =
                ByteBuffer.allocate(4 + rec.length).putInt(rec.length).put(rec).array();
        byte[] batch = new BatchCodec("lz4").encodeToArray(0, 0, 0, 1, framed, 0, framed.length);
        TransportClient c = client.pushClient(table.appId(), table.get(0).getWorker());
        for (int i = 0; i < 2; i++) { // a retry whose first try had landed
            TransportClient.await(
                            c.pushData(table.shuffleKey(), 0, 0, new NettyManagedBuffer(Unpooled.wrappedBuffer(batch))))
                    .release();
        }
        client.mapperEnd(spec, table, 0, false, 0, 0, java.util.Collections.singletonList(stats(0, batch)));
        Tally got = readAll(spec, 0, 1, 0, 1);
        assertEquals(1, got.count);
    }

    @Test
    void mapRangesSelectTheirMapsOnly() throws Exception {
        ShuffleSpec spec = spec(4, 2);
        Tally[] perMap = new Tally[4];
        for (int m = 0; m < 4; m++) {
            perMap[m] = new Tally();
            MapOutputWriter w = new MapOutputWriter(client, spec, m, 0);
            for (int i = 0; i < 100; i++) {
                byte[] rec = record(m, 0, i, 10);
                writeRecord(w, 1, rec);
                perMap[m].add(rec);
            }
            w.finish();
        }
        Tally got = readAll(spec, 1, 2, 1, 3);
        assertEquals(perMap[1].count + perMap[2].count, got.count);
        assertEquals(perMap[1].sum + perMap[2].sum, got.sum);
    }

    /**
     * A read of a quarter of the maps fetches about a quarter of the partition: the worker serves only the regions of
     * the file its map index says may hold those maps. Maps run two at a time, their pushes interleaved, as on an
     * executor with two cores.
     */
    @Test
    void aMapRangeReadFetchesOnlyItsMapsRegions() throws Exception {
        int maps = 16;
        ShuffleSpec spec = spec(maps, 1);
        Tally[] perMap = new Tally[maps];
        for (int m = 0; m < maps; m += 2) {
            MapOutputWriter[] pair = {
                new MapOutputWriter(client, spec, m, 0), new MapOutputWriter(client, spec, m + 1, 0)
            };
            perMap[m] = new Tally();
            perMap[m + 1] = new Tally();
            for (int i = 0; i < 256; i++) {
                for (int k = 0; k < 2; k++) {
                    byte[] rec =
                            record(m + k, 0, i, 1000); // random bytes: nothing compresses, sizes stay what they are
                    writeRecord(pair[k], 0, rec);
                    perMap[m + k].add(rec);
                }
            }
            for (MapOutputWriter w : pair) w.finish();
        }
        long whole = bytesFetched(spec, 0, maps, null);
        Tally expected = new Tally();
        for (int m = 4; m < 8; m++) {
            expected.count += perMap[m].count;
            expected.sum += perMap[m].sum;
        }
        Tally got = new Tally();
        long range = bytesFetched(spec, 4, 8, got);
        assertEquals(expected.count, got.count);
        assertEquals(expected.sum, got.sum);
        System.out.println("map-range read of maps [4, 8) of " + maps + ": fetched " + range + " bytes; the whole "
                + "partition (what a map-range read fetched before the map index) is " + whole + " bytes");
        assertTrue(
                range < whole * 2 / 5, "a read of a quarter of the maps fetched " + range + " of " + whole + " bytes");
    }

    /**
     * A map writing to 5,000 partitions (20,000 in SparkShuffleTest) holds at most estuary.client.push.maxBufferedBytes (plus a record) in its
     * buffers, pushing them early, and every record comes back once.
     */
    @Test
    void bufferedBytesStayBoundedWhateverThePartitionCount() throws Exception {
        int partitions = 5_000; // at least 1k of buffer each: 5 MB held without the bound
        ShuffleSpec spec = spec(1, partitions);
        EstuaryConf conf = cluster.clientConf()
                .set(ClientConfig.PUSH_MAX_BUFFERED, "1m")
                .set(ClientConfig.PUSH_RETRY_WAIT, "10ms");
        Tally expected = new Tally();
        long peak = 0;
        MapOutputWriter w;
        try (ShuffleClient bounded = new ShuffleClient(conf)) {
            w = new MapOutputWriter(bounded, spec, 0, 0);
            for (int i = 0; i < 30_000; i++) {
                byte[] rec = record(0, 0, i, 100);
                writeRecord(w, (int) ((i * 2654435761L) % partitions), rec);
                expected.add(rec);
                peak = Math.max(peak, w.bufferedBytes());
            }
            w.finish();
        }
        assertTrue(peak <= (1 << 20) + 1024, "buffers held " + peak + " bytes");
        assertTrue(w.earlyPushes() > 0, "the buffers were never pushed early");
        Tally got = readAll(spec, 0, partitions, 0, 1);
        assertEquals(expected.count, got.count);
        assertEquals(expected.sum, got.sum);
    }

    private static long bytesFetched(ShuffleSpec spec, int startMap, int endMap, Tally into) throws Exception {
        try (ShuffleBatchReader r = new ShuffleBatchReader(client, spec, 0, 1, startMap, endMap)) {
            io.netty.buffer.ByteBuf b;
            while ((b = r.next()) != null) {
                while (b.isReadable()) {
                    byte[] rec = new byte[b.readInt()];
                    b.readBytes(rec);
                    if (into != null) into.add(rec);
                }
            }
            return r.bytesFetched();
        }
    }

    @Test
    void shuffleWithNoDataReadsEmpty() throws Exception {
        ShuffleSpec spec = spec(3, 4);
        for (int m = 0; m < 3; m++) new MapOutputWriter(client, spec, m, 0).finish();
        assertEquals(0, readAll(spec, 0, 4, 0, 3).count);
        ShuffleSpec none = spec(0, 4);
        assertEquals(0, readAll(none, 0, 4, 0, 0).count);
    }

    @Test
    void unknownShuffleAndLocationAreRefusedClearly() throws Exception {
        ShuffleSpec spec = spec(2, 2);
        LocationTable table = client.register(spec, 0, false);
        TransportClient c = client.pushClient(table.appId(), table.get(0).getWorker());
        // A shuffle of this application the worker does not hold (another application's is FORBIDDEN with auth on).
        RemoteException e = assertThrows(
                RemoteException.class,
                () -> TransportClient.await(c.pushData(
                        ShuffleKey.of(table.appId(), 999_999),
                        0,
                        0,
                        new NettyManagedBuffer(Unpooled.wrappedBuffer(new byte[10])))));
        assertEquals(StatusCode.UNKNOWN_LOCATION, e.status());
        assertTrue(e.getMessage().contains(table.appId() + "-999999"), e.getMessage());

        ShuffleSpec unknown = new ShuffleSpec(spec.appId, 999, 2, 2, "127.0.0.1", lifecycle.port());
        RemoteException e2 = assertThrows(RemoteException.class, () -> client.reducerFiles(unknown, 0, 1, 0, 2));
        assertEquals(StatusCode.UNKNOWN_SHUFFLE, e2.status());
        assertTrue(e2.getMessage().contains("unknown shuffle 999"), e2.getMessage());

        // The worker still serves everyone else.
        byte[] ok = "still fine".getBytes(StandardCharsets.UTF_8);
        MapOutputWriter w = new MapOutputWriter(client, spec, 0, 0);
        writeRecord(w, 0, ok);
        w.finish();
        new MapOutputWriter(client, spec, 1, 0).finish();
        assertEquals(1, readAll(spec, 0, 2, 0, 2).count);
    }
}
