package io.estuary.client;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.read.ShuffleBatchReader;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import io.estuary.worker.storage.PartitionCache;
import io.netty.buffer.ByteBuf;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

/**
 * Many small partitions written and read through a real master and two real workers, with the small-partition
 * cache on and off: the same records come back either way (count and order-independent checksum per partition);
 * with the cache on every partition is cached after its commit (and its replica copy held there), chunks are served from memory (the hit counter,
 * also on /metrics, grows), and the cache empties once the shuffle is unregistered.
 */
class SmallPartitionCacheTest {
    private static final int MAPS = 3;
    private static final int PARTITIONS = 200;

    /** Per partition: records and an order-independent sum of their hashes. */
    private static final class Tallies {
        final long[] count = new long[PARTITIONS];
        final long[] sum = new long[PARTITIONS];

        void add(int p, byte[] record) {
            count[p]++;
            sum[p] += Arrays.hashCode(record) * 0x9E3779B97F4A7C15L;
        }
    }

    @Test
    void smallPartitionsReadTheSameWithAndWithoutTheCacheAndComeFromMemoryWithIt() throws Exception {
        Tallies written = new Tallies();
        Tallies cached = writeAndRead(true, written);
        Tallies written2 = new Tallies();
        Tallies uncached = writeAndRead(false, written2);
        assertArrayEquals(written.count, written2.count, "the same input both times");
        assertArrayEquals(written.sum, written2.sum);
        for (Tallies got : new Tallies[] {cached, uncached}) {
            assertArrayEquals(written.count, got.count, "records per partition");
            assertArrayEquals(written.sum, got.sum, "checksum per partition");
        }
    }

    private static Tallies writeAndRead(boolean cacheOn, Tallies written) throws Exception {
        EstuaryConf overrides = new EstuaryConf()
                .set(WorkerConfig.CACHE_ENABLED, Boolean.toString(cacheOn))
                .set(WorkerConfig.HEARTBEAT_INTERVAL, "300ms");
        try (MiniCluster cluster = new MiniCluster(2, 1, overrides)) {
            EstuaryConf conf = cluster.clientConf().set(ClientConfig.PUSH_BUFFER_SIZE, "4k");
            ShuffleClient client = new ShuffleClient(conf);
            LifecycleManager lifecycle = new LifecycleManager("app-cache-" + cacheOn, conf, "127.0.0.1");
            try {
                ShuffleSpec spec =
                        new ShuffleSpec(lifecycle.appId(), 0, MAPS, PARTITIONS, "127.0.0.1", lifecycle.port());
                Random random = new Random(11);
                for (int m = 0; m < MAPS; m++) {
                    MapOutputWriter w = new MapOutputWriter(client, spec, m, 0);
                    for (int p = 0; p < PARTITIONS; p++) {
                        for (int i = 0; i < 5; i++) { // a few hundred bytes per record, ~5 KB per partition
                            byte[] rec = new byte[50 + random.nextInt(500)];
                            random.nextBytes(rec);
                            byte[] framed = ByteBuffer.allocate(4 + rec.length)
                                    .putInt(rec.length)
                                    .put(rec)
                                    .array();
                            w.write(p, framed, 0, framed.length);
                            written.add(p, rec);
                        }
                    }
                    w.finish();
                }
                if (cacheOn) {
                    // Each partition's primary is read into its worker's cache right after its commit, off the
                    // commit's path; its replica copy is held there from the commit on, in place of a file.
                    waitFor(
                            () -> sumCache(cluster, PartitionCache::entries) == 2 * PARTITIONS,
                            "every partition is cached, and every copy held");
                    assertTrue(sumCache(cluster, c -> c.counters().heldBytes()) > 0);
                }
                Tallies got = new Tallies();
                for (int p = 0; p < PARTITIONS; p++) {
                    try (ShuffleBatchReader r = new ShuffleBatchReader(client, spec, p, p + 1, 0, MAPS)) {
                        ByteBuf b;
                        while ((b = r.next()) != null) {
                            while (b.isReadable()) {
                                byte[] rec = new byte[b.readInt()];
                                b.readBytes(rec);
                                got.add(p, rec);
                            }
                        }
                    }
                }

                // Every partition committed and read: what the workers hold now is the cache, and nothing else.
                assertEquals(
                        sumCache(cluster, PartitionCache::bytes),
                        sum(cluster, w -> w.storage().memory().held()),
                        "the cache is counted in held memory");
                long hits = sumCache(cluster, c -> c.counters().hits());
                if (cacheOn) {
                    assertTrue(hits >= PARTITIONS, "every partition's chunks from memory, got " + hits + " hits");
                    assertEquals(0, sumCache(cluster, c -> c.counters().misses()), "nothing small was read from disk");
                    Worker w = cluster.workers().get(0);
                    assertEquals(w.storage().cache().counters().hits(), scrape(w, "estuary_worker_cache_hits_total"));
                    assertTrue(scrape(w, "estuary_worker_cache_bytes") > 0);
                    // Unregistered: the workers delete the shuffle, and its entries go with it.
                    lifecycle.unregisterShuffle(0);
                    waitFor(
                            () -> sum(cluster, w2 -> w2.storage().memory().held()) == 0
                                    && sumCache(cluster, PartitionCache::entries) == 0,
                            "the cache empties with its shuffle");
                } else {
                    assertEquals(0, hits);
                    assertEquals(0, sumCache(cluster, PartitionCache::entries));
                }
                return got;
            } finally {
                lifecycle.close();
                client.close();
            }
        }
    }

    private static long sum(MiniCluster cluster, ToLongFunction<Worker> f) {
        long n = 0;
        for (Worker w : cluster.workers()) n += f.applyAsLong(w);
        return n;
    }

    private static long sumCache(MiniCluster cluster, java.util.function.Function<PartitionCache, Number> f) {
        return sum(cluster, w -> f.apply(w.storage().cache()).longValue());
    }

    /** One sample (without labels) of the worker's /metrics. */
    private static long scrape(Worker w, String name) throws Exception {
        HttpURLConnection c =
                (HttpURLConnection) new URL("http://127.0.0.1:" + w.httpPort() + "/metrics").openConnection();
        String body;
        try (InputStream in = c.getInputStream()) {
            body = new String(readAll(in), StandardCharsets.UTF_8);
        }
        for (String line : body.split("\n")) {
            if (line.startsWith(name + " "))
                return (long)
                        Double.parseDouble(line.substring(name.length() + 1).trim());
        }
        throw new AssertionError(name + " is not in /metrics");
    }

    private static byte[] readAll(InputStream in) throws java.io.IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        for (int n; (n = in.read(buf)) > 0; ) out.write(buf, 0, n);
        return out.toByteArray();
    }
}
