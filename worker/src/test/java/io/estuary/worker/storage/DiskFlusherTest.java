package io.estuary.worker.storage;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** One disk's flusher threads: order, time accounting, independence of disks, and closing. */
class DiskFlusherTest {
    @Test
    void oneThreadWritesInTheOrderQueued() {
        DiskFlusher f = new DiskFlusher("ordered", 1);
        List<Integer> ran = Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < 200; i++) {
            int n = i;
            f.submit(() -> ran.add(n));
        }
        f.close(); // waits for what was queued
        assertEquals(200, ran.size());
        for (int i = 0; i < 200; i++) assertEquals(i, ran.get(i));
    }

    @Test
    void eachFlushIsTimedAndTheRecentMeanFollowsSlowFlushes() throws Exception {
        DiskFlusher f = new DiskFlusher("timed", 2);
        AtomicLong totalNanos = new AtomicLong();
        AtomicInteger timed = new AtomicInteger();
        f.onFlush(nanos -> {
            totalNanos.addAndGet(nanos);
            timed.incrementAndGet();
        });
        assertEquals(0, f.averageFlushMicros(), "nothing flushed yet");
        for (int i = 0; i < 10; i++) f.submit(() -> sleep(20));
        f.close();
        assertEquals(10, timed.get());
        assertTrue(totalNanos.get() >= TimeUnit.MILLISECONDS.toNanos(10 * 20), totalNanos + " ns in all");
        assertTrue(f.averageFlushMicros() >= 15_000, f.averageFlushMicros() + " us");
    }

    @Test
    void aStuckDiskDelaysOnlyItsOwnFlushes() throws Exception {
        DiskFlusher stuck = new DiskFlusher("stuck", 1);
        DiskFlusher healthy = new DiskFlusher("healthy", 1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch healthyDone = new CountDownLatch(5);
        try {
            stuck.submit(() -> await(release));
            for (int i = 0; i < 5; i++) healthy.submit(healthyDone::countDown);
            assertTrue(healthyDone.await(30, TimeUnit.SECONDS), "the healthy disk's flushes waited for the stuck one");
            // A probe runs after what was queued before it, so it cannot finish while the disk is stuck.
            CountDownLatch probed = new CountDownLatch(1);
            stuck.probe(probed::countDown);
            assertFalse(probed.await(50, TimeUnit.MILLISECONDS));
            release.countDown();
            assertTrue(probed.await(30, TimeUnit.SECONDS));
        } finally {
            release.countDown();
            stuck.close();
            healthy.close();
        }
    }

    @Test
    void afterCloseFlushesAreRefused() {
        DiskFlusher f = new DiskFlusher("closed", 1);
        f.close();
        assertThrows(RejectedExecutionException.class, () -> f.submit(() -> {}));
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void await(CountDownLatch l) {
        try {
            l.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
