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

    /** The JVM's direct memory, as a test sets it. */
    private static final class TestDirect implements MemoryTracker.DirectMemory {
        volatile long used;

        @Override
        public long used() {
            return used;
        }

        @Override
        public long max() {
            return 4000;
        }
    }

    /**
     * Held bytes under the pause marks while the JVM's direct memory fills (the pool's partly used chunks): the worker
     * pauses at the same fractions of the JVM's limit, flushes as far as flushing can, and resumes on the tick that
     * sees the JVM's memory fall, with nothing held changing. The bound is half the JVM's limit, as in a worker.
     */
    @Test
    void aFullJvmPausesTheWorkerWhateverIsHeld() {
        TestDirect direct = new TestDirect(); // 4000 bytes of direct memory
        MemoryTracker m = new MemoryTracker(2000, 0.7, 0.85, 0.95, direct); // resume 1400, pause 1700 and 1900
        List<MemoryPressure> heard = new CopyOnWriteArrayList<>();
        m.addListener(heard::add);
        m.add(1200);
        assertEquals(MemoryPressure.NORMAL, m.level());
        assertEquals(-200, m.flushToResume(), "nothing to flush: 1200 held, resume below 1400");

        direct.used = 3500; // 87.5% of the JVM's limit: as if 1750 were held
        m.add(10);
        assertEquals(MemoryPressure.PAUSE_PUSH, m.level());
        assertEquals(350, m.flushToResume(), "flush what brings the JVM's fill under the resume mark");
        direct.used = 3900; // 97.5%
        m.tick();
        assertEquals(MemoryPressure.PAUSE_ALL, m.level());
        assertEquals(550, m.flushToResume());
        m.flushQueued(1000);
        assertEquals(210, m.flushToResume(), "never more than is held and not yet queued");
        m.flushDone(1000);

        direct.used = 2000; // the flushes freed the pool's chunks; held is unchanged
        m.tick();
        assertEquals(MemoryPressure.NORMAL, m.level());
        assertEquals(
                List.of(
                        MemoryPressure.NORMAL,
                        MemoryPressure.PAUSE_PUSH,
                        MemoryPressure.PAUSE_ALL,
                        MemoryPressure.NORMAL),
                dedupe(heard));
        assertEquals(1210, m.held());
    }

    /**
     * What fills the JVM beyond what the worker could free by flushing everything it holds does not pause it: a
     * worker waiting for the pools to give memory back would never resume (CELEBORN-1792).
     */
    @Test
    void memoryTheWorkerCannotFreeDoesNotHoldItPaused() {
        TestDirect direct = new TestDirect();
        MemoryTracker m = new MemoryTracker(2000, 0.7, 0.85, 0.95, direct);
        direct.used = 3950;
        m.add(1800); // flushing it would bring the JVM to 2150, under its resume mark of 2800: it counts
        assertEquals(MemoryPressure.PAUSE_ALL, m.level());
        m.release(1700); // flushed: 100 held, while the JVM stays full of memory that is not the worker's
        m.tick();
        assertEquals(MemoryPressure.NORMAL, m.level(), "nothing the worker holds could bring the JVM down");
        m.add(300);
        assertEquals(MemoryPressure.NORMAL, m.level(), "400 held against 3550 it cannot free");
        direct.used = 2000;
        m.add(1400); // 1800 held and a JVM with room: held bytes decide, as always
        assertEquals(MemoryPressure.PAUSE_PUSH, m.level());
    }

    /** Without a JVM gauge the level follows held bytes alone, as the tests above assume. */
    @Test
    void heldBytesAloneDecideWithoutAGauge() {
        MemoryTracker m = new MemoryTracker(1000, 0.7, 0.85, 0.95, null);
        m.add(840);
        assertEquals(MemoryPressure.NORMAL, m.level());
        assertEquals(140, m.pressure(140));
    }

    /** Ticks repeat the level to listeners; the changes are what matter here. */
    private static List<MemoryPressure> dedupe(List<MemoryPressure> heard) {
        List<MemoryPressure> out = new ArrayList<>();
        for (MemoryPressure p : heard) if (out.isEmpty() || out.get(out.size() - 1) != p) out.add(p);
        return out;
    }
}
