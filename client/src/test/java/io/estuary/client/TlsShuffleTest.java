package io.estuary.client;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.read.ShuffleBatchReader;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.testing.TestCertificates;
import io.estuary.worker.MiniCluster;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A shuffle through a real master and real workers with TLS on every port group and mutual TLS: pushes (replicated
 * to a second worker), commits and fetches all go over TLS, and the output matches the input by count and
 * order-independent checksum. Every port refuses a plain client, naming the mismatch.
 */
class TlsShuffleTest {
    @TempDir
    static Path dir;

    static final TlsConfig.Group[] ALL = TlsConfig.Group.values();

    @Test
    void aReplicatedAuthenticatedShuffleOverTlsEverywhereReturnsEveryRecordOnce() throws Exception {
        TestCertificates ca = TestCertificates.authority(dir, "cluster");
        TestCertificates.Issued node = ca.issue("node");
        // With authentication too: the driver registers its secret over TLS, every connection proves its identity.
        EstuaryConf tls = io.estuary.testing.ClusterSecrets.enable(
                ca.configure(new EstuaryConf(), node, true, ALL), io.estuary.testing.ClusterSecrets.newFile(dir));
        try (MiniCluster cluster = new MiniCluster(1, 2, 1, tls)) {
            EstuaryConf conf = cluster.clientConf()
                    .set(ClientConfig.PUSH_BUFFER_SIZE, "8k")
                    .set(ClientConfig.PUSH_REPLICATE, "true");
            try (LifecycleManager lifecycle = new LifecycleManager("app-tls", conf, "127.0.0.1");
                    ShuffleClient client = new ShuffleClient(conf.copy()
                            .set(
                                    io.estuary.common.config.AuthConfig.APPLICATION_SECRET.key(),
                                    java.util.Base64.getEncoder().encodeToString(lifecycle.applicationSecret())))) {
                int maps = 4;
                int partitions = 7;
                ShuffleSpec spec =
                        new ShuffleSpec(lifecycle.appId(), 0, maps, partitions, "127.0.0.1", lifecycle.port());
                long count = 0;
                long sum = 0;
                for (int m = 0; m < maps; m++) {
                    MapOutputWriter w = new MapOutputWriter(client, spec, m, 0);
                    Random r = new Random(m);
                    for (int i = 0; i < 3000; i++) {
                        byte[] rec = new byte[1 + r.nextInt(400)];
                        r.nextBytes(rec);
                        byte[] framed = ByteBuffer.allocate(4 + rec.length)
                                .putInt(rec.length)
                                .put(rec)
                                .array();
                        w.write(Math.floorMod(i * 31 + m, partitions), framed, 0, framed.length);
                        count++;
                        sum += Arrays.hashCode(rec) * 0x9E3779B97F4A7C15L;
                    }
                    w.finish();
                }
                long gotCount = 0;
                long gotSum = 0;
                try (ShuffleBatchReader reader = new ShuffleBatchReader(client, spec, 0, partitions, 0, maps)) {
                    io.netty.buffer.ByteBuf b;
                    while ((b = reader.next()) != null) {
                        while (b.isReadable()) {
                            byte[] rec = new byte[b.readInt()];
                            b.readBytes(rec);
                            gotCount++;
                            gotSum += Arrays.hashCode(rec) * 0x9E3779B97F4A7C15L;
                        }
                    }
                }
                assertEquals(count, gotCount, "records");
                assertEquals(sum, gotSum, "order-independent checksum");

                // Every port of every group is TLS: a plain client is told so at connect.
                WorkerAddress w = cluster.workers().get(0).address();
                int[] ports = {
                    cluster.master().port(), w.getRpcPort(), w.getPushPort(), w.getFetchPort(), lifecycle.port()
                };
                try (TransportClientFactory plain = new TransportClientFactory(new EstuaryConf(), "plain")) {
                    for (int port : ports) {
                        RemoteException e = assertThrows(RemoteException.class, () -> plain.client("127.0.0.1", port));
                        assertEquals(StatusCode.VERSION_MISMATCH, e.status(), e.getMessage());
                        assertTrue(e.getMessage().contains("answered with TLS"), e.getMessage());
                    }
                }
            }
        }
    }
}
