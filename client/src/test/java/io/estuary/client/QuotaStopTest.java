package io.estuary.client;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.status.StatusCode;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.protocol.QuotaScope;
import io.estuary.master.protocol.QuotaSet;
import io.estuary.master.quota.QuotaSpec;
import io.estuary.testing.Waits;
import io.estuary.worker.MiniCluster;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/**
 * A running application over its user's bytes quota (issue 19), through a real master and two workers with replicas
 * on: both of the user's applications are told so with their heartbeats; under {@code overBytes=stop} the largest
 * shuffle of the one not marked high priority is stopped, and reading it fails with QUOTA_EXCEEDED and the master's
 * reason, while the high-priority application's shuffle stays and reads back exact by count and checksum.
 */
class QuotaStopTest {
    private static final class App {
        final LifecycleManager lm;
        final ShuffleClient client;
        final ShuffleSpec spec;
        long count;
        long sum;

        App(MiniCluster cluster, String name, boolean highPriority) throws Exception {
            EstuaryConf conf = cluster.clientConf()
                    .set(ClientConfig.USER.key(), "dave")
                    .set(ClientConfig.HIGH_PRIORITY.key(), String.valueOf(highPriority))
                    .set(ClientConfig.PUSH_REPLICATE.key(), "true")
                    .set(ClientConfig.APPLICATION_HEARTBEAT_INTERVAL.key(), "300ms");
            lm = new LifecycleManager(name, conf, "127.0.0.1");
            client = new ShuffleClient(conf.copy()
                    .set(
                            AuthConfig.APPLICATION_SECRET.key(),
                            Base64.getEncoder().encodeToString(lm.applicationSecret())));
            spec = new ShuffleSpec(lm.appId(), 0, 2, 4, "127.0.0.1", lm.port());
        }

        /** About 300 KB of incompressible records, 600 KB with the replicas. */
        void write() throws Exception {
            for (int m = 0; m < spec.numMappers; m++) {
                MapOutputWriter w = client.openWriter(spec, m, 0);
                for (int i = 0; i < 1500; i++) {
                    byte[] rec = FramedRecords.framed(m, i, 96);
                    w.write(i % spec.numPartitions, rec, 0, rec.length);
                    count++;
                    sum += FramedRecords.hash(rec);
                }
                w.finish();
            }
        }

        void close() {
            client.close();
            lm.close();
        }
    }

    @Test
    void theLargestShuffleOfANormalApplicationIsStoppedAndAHighPriorityOneIsOnlyTold() throws Exception {
        try (MiniCluster cluster = new MiniCluster(2, 1, new EstuaryConf())) {
            App low = new App(cluster, "dave-batch", false);
            App high = new App(cluster, "dave-urgent", true);
            try {
                low.write();
                high.write();
                // Both shuffles are known to the master (a lease's placement is recorded in the background).
                Waits.waitFor(
                        () -> cluster.master()
                                .state(s ->
                                        s.isShufflePlaced(low.lm.appId(), 0) && s.isShufflePlaced(high.lm.appId(), 0)),
                        30_000,
                        "both shuffles recorded");
                cluster.master()
                        .log()
                        .submit(MasterCommand.newBuilder()
                                .setQuotaSet(QuotaSet.newBuilder()
                                        .setQuota(QuotaSpec.parse(
                                                "test", QuotaScope.QUOTA_USER, "dave", "bytes=256k,overBytes=stop")))
                                .build())
                        .join();
                Waits.waitFor(
                        () -> !cluster.master().state(s -> s.isShufflePlaced(low.lm.appId(), 0)),
                        30_000,
                        "the normal application's shuffle stopped");
                Waits.waitFor(() -> !high.lm.quotaWarnings().isEmpty(), 30_000, "the high-priority one is told");
                String told = high.lm.quotaWarnings().get(0);
                assertTrue(told.startsWith("user dave holds "), told);
                assertTrue(told.contains("on workers, over its quota of 256 KiB"), told);
                Waits.waitFor(() -> !low.lm.quotaWarnings().isEmpty(), 30_000, "the normal one is told too");

                Exception stopped = assertThrows(
                        Exception.class, () -> FramedRecords.readAll(low.client, low.spec, 0, low.spec.numPartitions));
                StringBuilder chain = new StringBuilder();
                boolean typed = false;
                for (Throwable t = stopped; t != null; t = t.getCause()) {
                    chain.append(t).append(" / ");
                    typed |= t instanceof io.estuary.common.status.HasStatus
                            && ((io.estuary.common.status.HasStatus) t).status() == StatusCode.QUOTA_EXCEEDED;
                }
                assertTrue(typed, "QUOTA_EXCEEDED: " + chain);
                assertTrue(chain.toString().contains("(overBytes=stop): its largest shuffle"), chain.toString());

                boolean kept = cluster.master().state(s -> s.isShufflePlaced(high.lm.appId(), 0));
                assertTrue(kept, "the high-priority application's shuffle is never stopped");
                long[] got = FramedRecords.readAll(high.client, high.spec, 0, high.spec.numPartitions);
                assertEquals(high.count, got[0], "the high-priority application's records");
                assertEquals(high.sum, got[1], "and their checksum");
            } finally {
                low.close();
                high.close();
            }
        }
    }
}
