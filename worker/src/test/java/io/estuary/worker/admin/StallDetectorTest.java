package io.estuary.worker.admin;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.testing.ManualClock;
import io.estuary.worker.storage.Disk;
import io.estuary.worker.storage.StorageManager;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Hang detection on real executors and event loops, each blocked by a latch the test holds. */
class StallDetectorTest {
    private static final long TIMEOUT_MS = 300;

    private static void block(java.util.concurrent.Executor e, CountDownLatch release) {
        e.execute(() -> {
            try {
                release.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
        });
    }

    private static List<String> names(List<String> stalled) {
        List<String> out = new ArrayList<>();
        for (String s : stalled) out.add(s.substring(0, s.indexOf(" (")));
        return out;
    }

    /** The test drives the detector's clock and probes by hand: blocked means blocked, however slow the machine. */
    @Test
    void blockedExecutorAndEventLoopAreStalledUntilTheyRunAgain() throws Exception {
        ExecutorService flusher = Executors.newSingleThreadExecutor();
        NioEventLoopGroup loops = new NioEventLoopGroup(2);
        ExecutorService gone = Executors.newSingleThreadExecutor();
        gone.shutdown();
        ManualClock clock = new ManualClock();
        try (StallDetector d = new StallDetector(TIMEOUT_MS, clock)) {
            List<EventExecutor> ls = new ArrayList<>();
            loops.forEach(ls::add);
            d.watch("flusher", flusher);
            d.watch("loop 0", ls.get(0));
            d.watch("loop 1", ls.get(1));
            d.watch("shut down", gone);
            assertEquals(4, d.watched());
            d.probe();
            clock.advanceMillis(TIMEOUT_MS + 1);
            waitFor(() -> d.stalled().isEmpty(), 60_000, "nothing is stalled while nothing is blocked");

            CountDownLatch release = new CountDownLatch(1);
            block(flusher, release);
            block(ls.get(0), release);
            d.probe();
            assertEquals(Arrays.asList(), d.stalled(), "no probe has waited longer than the timeout yet");
            clock.advanceMillis(TIMEOUT_MS);
            assertEquals(Arrays.asList(), d.stalled(), "exactly the timeout is not yet a stall");
            clock.advanceMillis(1_000);
            waitFor(
                    () -> names(d.stalled()).equals(Arrays.asList("flusher", "loop 0")),
                    60_000,
                    "the blocked flusher and event loop (only) are stalled: " + d.stalled());
            assertTrue(
                    d.stalled().get(0).matches("flusher \\(no progress for \\d+ s\\)"),
                    d.stalled().toString());

            release.countDown();
            waitFor(() -> d.stalled().isEmpty(), 60_000, "released executors are no longer stalled: " + d.stalled());
        } finally {
            flusher.shutdownNow();
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    @Test
    void healthFailsNamingABlockedFlusherAndRecovers() throws Exception {
        Path dir = Files.createTempDirectory("estuary-stall");
        // Authentication on, as by default: /health stays open without the admin token.
        EstuaryConf conf = io.estuary.testing.ClusterSecrets.enable(
                        new EstuaryConf(), io.estuary.testing.ClusterSecrets.shared())
                .set(WorkerConfig.STORAGE_DIRS, dir.toString())
                .set(WorkerConfig.HTTP_PORT, "0")
                .set(WorkerConfig.HEALTH_STALL_TIMEOUT, TIMEOUT_MS + "ms");
        StorageManager storage = new StorageManager(conf);
        WorkerAdmin admin = new WorkerAdmin(conf, "test", storage, () -> 0, () -> 0);
        CountDownLatch release = new CountDownLatch(1);
        try {
            admin.start("127.0.0.1", 0, () -> null, () -> "TEST", () -> {});
            int port = admin.httpPort();
            waitFor(
                    () -> Scrapes.getOrFail(port, "/health").code == 200,
                    60_000,
                    "a worker with idle flushers is healthy");
            assertEquals("ok\n", Scrapes.get(port, "/health").body);

            Disk disk = storage.disks().iterator().next();
            block(disk.flusher()::submit, release);
            waitFor(
                    () -> Scrapes.getOrFail(port, "/health").code == 503,
                    60_000,
                    "a blocked flusher fails the health check");
            Scrapes.Reply r = Scrapes.get(port, "/health");
            assertTrue(r.body.startsWith("stalled: flusher of " + disk.mountPoint() + " (no progress for "), r.body);
            assertEquals(
                    1.0,
                    Scrapes.sample(
                            Scrapes.samples(Scrapes.get(port, "/metrics").body), "estuary_worker_stalled_executors"));

            release.countDown();
            waitFor(() -> Scrapes.getOrFail(port, "/health").code == 200, 60_000, "the flusher runs again: healthy");
        } finally {
            release.countDown();
            admin.close();
            storage.close();
            Files.walk(dir)
                    .sorted(java.util.Comparator.reverseOrder())
                    .forEach(p -> p.toFile().delete());
        }
    }
}
