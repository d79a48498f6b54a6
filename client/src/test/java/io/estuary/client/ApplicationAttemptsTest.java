package io.estuary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.read.ShuffleBatchReader;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.worker.MiniCluster;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Two drivers of one engine application in a row (issue 14, item 2): a driver the cluster manager retries (a YARN
 * application attempt) keeps the engine's application id and numbers its shuffles from 0 again. The first one here
 * is never closed (a driver that died without unregistering); each must read exactly what its own maps wrote.
 */
class ApplicationAttemptsTest {
    static final int MAPS = 3;

    @Test
    void twoDriversOfOneEngineApplicationReadOnlyTheirOwnData() throws Exception {
        try (MiniCluster cluster = new MiniCluster(2, 1, new EstuaryConf())) {
            EstuaryConf conf = cluster.clientConf()
                    .set(ClientConfig.PUSH_BUFFER_SIZE, "4k")
                    .set(ClientConfig.PUSH_RETRY_WAIT, "10ms");
            String engineAppId = "application_1700000000000_0042";
            LifecycleManager first = new LifecycleManager(engineAppId, conf, "127.0.0.1");
            LifecycleManager second = null;
            try (ShuffleClient firstClient = new ShuffleClient(conf);
                    ShuffleClient secondClient = new ShuffleClient(conf)) {
                ShuffleSpec firstSpec = new ShuffleSpec(first.appId(), 0, MAPS, 4, "127.0.0.1", first.port());
                long[] firstWrote = write(firstClient, firstSpec, "first");
                assertEquals(firstWrote[0], read(firstClient, firstSpec)[0]);

                // The first driver is gone without a word; the retried one starts with the same engine id.
                second = new LifecycleManager(engineAppId, conf, "127.0.0.1");
                assertNotEquals(first.appId(), second.appId(), "each driver is its own Estuary application");
                assertTrue(second.appId().startsWith(engineAppId), second.appId());
                // Same engine shuffle id, other rows, and another partition count.
                ShuffleSpec secondSpec = new ShuffleSpec(second.appId(), 0, MAPS, 5, "127.0.0.1", second.port());
                long[] secondWrote = write(secondClient, secondSpec, "second");
                long[] secondRead = read(secondClient, secondSpec);
                assertEquals(secondWrote[0], secondRead[0], "records the second driver reads");
                assertEquals(secondWrote[1], secondRead[1], "checksum of what the second driver reads");
                long[] firstRead = read(firstClient, firstSpec);
                assertEquals(firstWrote[0], firstRead[0], "records the first driver reads");
                assertEquals(firstWrote[1], firstRead[1], "checksum of what the first driver reads");
            } finally {
                if (second != null) second.close();
                first.close();
            }
        }
    }

    /** Each map writes its rows, tagged with the driver, over every partition; returns {count, checksum}. */
    private static long[] write(ShuffleClient client, ShuffleSpec spec, String driver) throws Exception {
        long count = 0;
        long sum = 0;
        for (int m = 0; m < MAPS; m++) {
            MapOutputWriter w = new MapOutputWriter(client, spec, m, 0);
            for (int i = 0; i < 3_000; i++) {
                byte[] rec = (driver + "-" + m + "-" + i).getBytes(StandardCharsets.UTF_8);
                byte[] framed = ByteBuffer.allocate(4 + rec.length)
                        .putInt(rec.length)
                        .put(rec)
                        .array();
                w.write(i % spec.numPartitions, framed, 0, framed.length);
                count++;
                sum += hash(rec);
            }
            w.finish();
        }
        return new long[] {count, sum};
    }

    private static long[] read(ShuffleClient client, ShuffleSpec spec) throws Exception {
        long count = 0;
        long sum = 0;
        try (ShuffleBatchReader r = new ShuffleBatchReader(client, spec, 0, spec.numPartitions, 0, MAPS)) {
            ByteBuf b;
            while ((b = r.next()) != null) {
                while (b.isReadable()) {
                    byte[] rec = new byte[b.readInt()];
                    b.readBytes(rec);
                    count++;
                    sum += hash(rec);
                }
            }
        }
        return new long[] {count, sum};
    }

    private static long hash(byte[] rec) {
        return java.util.Arrays.hashCode(rec) * 0x9E3779B97F4A7C15L;
    }
}
