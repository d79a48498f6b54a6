package io.estuary.client;

import static io.estuary.client.FramedRecords.*;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.storage.DiskHangInjection;
import java.io.File;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A disk that is slow but writing, on a real worker: its commit takes several times estuary.worker.commit.maxWait.
 * The driver waits on it (the worker answers "pending" each maxWait) without using up estuary.client.commit.retries,
 * which are for failures; the wait stays bounded by estuary.client.commit.timeout.
 */
class SlowDiskCommitTest {
    private static final int PARTITIONS = 8;

    @AfterEach
    void heal() {
        DiskHangInjection.healAll();
    }

    private static MiniCluster cluster() throws Exception {
        return new MiniCluster(
                1,
                1,
                new EstuaryConf().set(WorkerConfig.FLUSH_BUFFER_SIZE, "4k").set(WorkerConfig.COMMIT_MAX_WAIT, "200ms"));
    }

    /** Writes two maps, with every partition write made {@code delayMs} slow before the maps end; {count, sum}. */
    private static long[] writeThenSlowDown(MiniCluster cluster, ShuffleClient client, ShuffleSpec spec, long delayMs)
            throws Exception {
        long[] expected = new long[2];
        MapOutputWriter[] writers = new MapOutputWriter[spec.numMappers];
        for (int m = 0; m < spec.numMappers; m++) {
            writers[m] = new MapOutputWriter(client, spec, m, 0);
            for (int i = 0; i < 500; i++) {
                byte[] r = framed(m, i, 60 + (i * 7) % 120);
                expected[0]++;
                expected[1] += hash(r);
                writers[m].write(i % PARTITIONS, r, 0, r.length);
            }
        }
        File dir = cluster.root().resolve("worker0-disk0").toFile();
        DiskHangInjection.slowWrites(dir, delayMs);
        for (MapOutputWriter w : writers) w.finish();
        return expected;
    }

    @Test
    void aSlowButWritingDiskIsWaitedOnWithoutUsingUpTheRetries() throws Exception {
        try (MiniCluster cluster = cluster()) {
            EstuaryConf conf = cluster.clientConf()
                    .set(ClientConfig.PUSH_BUFFER_SIZE, "4k")
                    .set(ClientConfig.COMMIT_RETRIES, "1")
                    .set(ClientConfig.COMMIT_TIMEOUT, "60s");
            try (ShuffleClient client = new ShuffleClient(conf);
                    LifecycleManager lifecycle =
                            new LifecycleManager("app-slow-" + System.nanoTime(), conf, "127.0.0.1")) {
                ShuffleSpec spec = new ShuffleSpec(lifecycle.appId(), 0, 2, PARTITIONS, "127.0.0.1", lifecycle.port());
                // Each of the partitions' last writes takes 300 ms, one after another on the disk: the commit takes
                // about 2.4 s, twelve times maxWait and six times maxWait x (1 + retries).
                long[] expected = writeThenSlowDown(cluster, client, spec, 300);
                long t0 = System.currentTimeMillis();
                long[] got = readAll(client, spec, 0, PARTITIONS);
                System.out.printf(
                        "SLOW-DISK: %d records read back after a commit of %d ms (maxWait 200 ms, 1 retry)%n",
                        got[0], System.currentTimeMillis() - t0);
                assertEquals(expected[0], got[0], "records");
                assertEquals(expected[1], got[1], "checksum");
                DiskHangInjection.healAll();
            }
        }
    }

    @Test
    void aDiskTooSlowForTheCommitTimeoutIsGivenUpWithinIt() throws Exception {
        try (MiniCluster cluster = cluster()) {
            EstuaryConf conf = cluster.clientConf()
                    .set(ClientConfig.PUSH_BUFFER_SIZE, "4k")
                    .set(ClientConfig.COMMIT_RETRIES, "1")
                    .set(ClientConfig.COMMIT_TIMEOUT, "2s");
            try (ShuffleClient client = new ShuffleClient(conf);
                    LifecycleManager lifecycle =
                            new LifecycleManager("app-slow-" + System.nanoTime(), conf, "127.0.0.1")) {
                ShuffleSpec spec = new ShuffleSpec(lifecycle.appId(), 0, 2, PARTITIONS, "127.0.0.1", lifecycle.port());
                // 8 x 3 s of writes: the 2 s commit timeout ends the wait, with the partitions not committed.
                writeThenSlowDown(cluster, client, spec, 3_000);
                Exception e = assertThrows(Exception.class, () -> readAll(client, spec, 0, PARTITIONS));
                System.out.println("SLOW-DISK: past the commit timeout: " + e);
                DiskHangInjection.healAll(); // the queued writes finish at once: the worker closes quickly
            }
        }
    }
}
