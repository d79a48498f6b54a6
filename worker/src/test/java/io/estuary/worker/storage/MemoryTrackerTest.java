package io.estuary.worker.storage;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class MemoryTrackerTest {
    @Test
    void listenersHearEveryChangeInOrder() {
        MemoryTracker m = new MemoryTracker(1000);
        List<MemoryPressure> heard = new CopyOnWriteArrayList<>();
        m.addListener(heard::add);
        m.add(800);
        m.add(60); // 860: pause pushes
        m.add(100); // 960: pause all
        m.release(200); // 760: replication resumes
        m.release(100); // 660: all resume
        assertEquals(
                List.of(
                        MemoryPressure.NORMAL,
                        MemoryPressure.PAUSE_PUSH,
                        MemoryPressure.PAUSE_ALL,
                        MemoryPressure.PAUSE_PUSH,
                        MemoryPressure.NORMAL),
                heard);
        assertEquals(960, m.peak());
        assertEquals(1, m.pauses());
    }

    /**
     * Threads add and release concurrently across every watermark; once all is released the level must be NORMAL
     * and the last word every listener heard must be NORMAL, without any tick: a racing release can never leave the
     * worker paused.
     */
    @Test
    void racingAddsAndReleasesNeverLeaveItPaused() throws Exception {
        for (int round = 0; round < 20; round++) {
            MemoryTracker m = new MemoryTracker(10_000);
            MemoryPressure[] last = new MemoryPressure[1];
            m.addListener(l -> {
                synchronized (last) {
                    last[0] = l;
                }
            });
            int threads = 4;
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long seed = round * 31L + t;
                Thread th = new Thread(() -> {
                    Random r = new Random(seed);
                    try {
                        start.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    for (int i = 0; i < 20_000; i++) {
                        long n = 1 + r.nextInt(3_000);
                        m.add(n);
                        if (r.nextInt(50) == 0) Thread.yield();
                        m.release(n);
                    }
                });
                th.start();
                ts.add(th);
            }
            start.countDown();
            for (Thread t : ts) t.join();
            assertEquals(0, m.held());
            assertEquals(MemoryPressure.NORMAL, m.level(), "round " + round);
            synchronized (last) {
                assertEquals(MemoryPressure.NORMAL, last[0], "round " + round);
            }
        }
    }

    @Test
    void flushQueuedBytesAreNotCountedAsFreeable() {
        MemoryTracker m = new MemoryTracker(1000);
        m.add(900);
        m.flushQueued(500);
        assertEquals(400, m.unqueued());
        m.flushDone(500);
        m.release(500);
        assertEquals(400, m.unqueued());
        assertEquals(MemoryPressure.NORMAL, m.level());
    }
}
