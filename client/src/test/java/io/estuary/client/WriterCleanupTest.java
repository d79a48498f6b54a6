package io.estuary.client;

import static io.estuary.client.FramedRecords.framed;
import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.util.EstuaryException;
import io.estuary.network.testing.LeakCheckExtension;
import io.estuary.worker.MiniCluster;
import java.util.Collections;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * What a map task holds when it stops half way: batches taken for a merged push that never went out (the task was
 * interrupted), and pushes waiting for a retry or a revive when the executor's {@link ShuffleClient} closes. Each
 * must be released (checked with Netty's paranoid leak detection in the test itself), and a task waiting for its
 * pushes must fail at once, not wait out its timeouts.
 */
class WriterCleanupTest {

    /** A real master and worker, a driver and an executor client; closed together (the client may be closed twice). */
    private static final class Setup implements AutoCloseable {
        final MiniCluster cluster;
        final LifecycleManager driver;
        final ShuffleClient client;

        Setup(EstuaryConf settings) throws Exception {
            cluster = new MiniCluster(1, 1, new EstuaryConf());
            EstuaryConf conf = cluster.clientConf().set(ClientConfig.PUSH_REPLICATE, "false");
            for (java.util.Map.Entry<String, String> e : settings.toMap().entrySet())
                conf.set(e.getKey(), e.getValue());
            driver = new LifecycleManager("app-cleanup-" + System.nanoTime(), conf, "127.0.0.1");
            client = new ShuffleClient(conf);
        }

        ShuffleSpec spec(int partitions) {
            return new ShuffleSpec(driver.appId(), 0, 1, partitions, "127.0.0.1", driver.port());
        }

        @Override
        public void close() throws Exception {
            client.close();
            driver.close();
            cluster.close();
        }
    }

    @Test
    void aTaskInterruptedWhileItsLastBuffersGoOutReleasesEveryBatchItTook() throws Exception {
        try (Setup s = new Setup(new EstuaryConf().set(ClientConfig.PUSH_MERGED_SIZE, "1k"))) {
            ShuffleSpec spec = s.spec(20);
            s.client.register(spec, 0, false); // so finish() below only encodes and pushes
            MapOutputWriter w = new MapOutputWriter(s.client, spec, 0, 0);
            for (int i = 0; i < 200; i++) {
                byte[] r = framed(0, i, 40);
                w.write(i % 20, r, 0, r.length); // about 440 bytes per partition: two or three per merged push
            }
            // Spark interrupts the thread of a task it kills: the first merged push cannot wait for its permits.
            Thread.currentThread().interrupt();
            try {
                EstuaryException e = assertThrows(EstuaryException.class, w::finish);
                assertTrue(e.getMessage().contains("interrupted"), e.getMessage());
            } finally {
                Thread.interrupted();
            }
            w.abort();
            assertEquals(
                    Collections.emptyList(), LeakCheckExtension.leaksNow(), "buffers leaked by the interrupted finish");
        }
    }

    @Test
    void closingTheClientFailsARevivePendingInItsBatchWindow() throws Exception {
        // The revive waits for a window that never ends in this test: only the close can settle it.
        try (Setup s = new Setup(new EstuaryConf()
                .set(ClientConfig.REVIVE_BATCH_WINDOW, "10min")
                .set(ClientConfig.PUSH_BUFFER_SIZE, "4k"))) {
            closeWhileAPushWaits(s, () -> s.client.pendingRevives() > 0, "a revive waiting for its batch window");
        }
    }

    @Test
    void closingTheClientDropsAPendingPushRetry() throws Exception {
        // The revive fails (the only worker is gone) and the push waits 5 to 10 s before it tries again.
        try (Setup s = new Setup(
                new EstuaryConf().set(ClientConfig.PUSH_RETRY_WAIT, "10s").set(ClientConfig.PUSH_BUFFER_SIZE, "4k"))) {
            closeWhileAPushWaits(s, () -> s.client.pendingRetries() > 0, "a push waiting to be retried");
        }
    }

    /**
     * The only worker dies, a map's push to it fails and waits ({@code waiting}); the task waits in finish() for its
     * pushes when the executor's client closes: the task fails at once, and nothing leaks.
     */
    private static void closeWhileAPushWaits(Setup s, BooleanSupplier waiting, String what) throws Exception {
        ShuffleSpec spec = s.spec(2);
        s.client.register(spec, 0, false);
        s.cluster.workers().get(0).close();
        MapOutputWriter w = new MapOutputWriter(s.client, spec, 0, 0);
        for (int i = 0; i < 100; i++) {
            byte[] r = framed(0, i, 100);
            w.write(0, r, 0, r.length); // past the 4k buffer: pushes go out now
        }
        waitFor(waiting, 60_000, what);
        CompletableFuture<long[]> finish = new CompletableFuture<>();
        Thread task = new Thread(
                () -> {
                    try {
                        finish.complete(w.finish());
                    } catch (Throwable t) {
                        finish.completeExceptionally(t);
                    }
                },
                "map-task");
        task.setDaemon(true);
        task.start();
        s.client.close();
        // Without the close settling the push, finish() would wait for it for many minutes.
        ExecutionException e = assertThrows(ExecutionException.class, () -> finish.get(60, TimeUnit.SECONDS));
        assertTrue(
                e.getCause().getMessage().contains("shuffle client closed"),
                e.getCause().toString());
        w.abort();
        assertEquals(Collections.emptyList(), LeakCheckExtension.leaksNow(), "buffers of pushes the close dropped");
    }
}
