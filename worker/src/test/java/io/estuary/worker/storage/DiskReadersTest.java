package io.estuary.worker.storage;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A disk's reader threads give up the reads that wait for a disk declared failed: queued and running ones are
 * answered at once (a queued one never runs), one submitted while the disk is failed is answered on the caller's
 * thread, and a read that ended is left alone.
 */
class DiskReadersTest {
    private static final long WAIT_S = 30;

    @Test
    void queuedAndRunningReadsAreGivenUpWhenTheDiskFails() throws Exception {
        DiskReaders readers = new DiskReaders("test", 1);
        CountDownLatch diskReturns = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(1);
        AtomicBoolean queuedRan = new AtomicBoolean();
        List<String> answers = new CopyOnWriteArrayList<>();
        try {
            readers.execute(
                    () -> {
                        running.countDown();
                        awaitQuietly(diskReturns); // a read the disk never answers
                    },
                    why -> answers.add("running: " + why));
            assertTrue(running.await(WAIT_S, TimeUnit.SECONDS));
            readers.execute(() -> queuedRan.set(true), why -> answers.add("queued: " + why));
            assertEquals(2, readers.pending());
            assertEquals(1, readers.queued());

            assertEquals(2, readers.giveUpAll("hangs"));
            assertEquals(2, answers.size(), "both readers answered while the disk still hangs: " + answers);
            assertTrue(answers.contains("running: hangs") && answers.contains("queued: hangs"), answers.toString());
            assertEquals(0, readers.pending());
            assertEquals(2, readers.givenUp());
            assertEquals(0, readers.giveUpAll("again"), "a read is given up once");

            diskReturns.countDown();
            CountDownLatch after = new CountDownLatch(1);
            readers.execute(after::countDown);
            assertTrue(after.await(WAIT_S, TimeUnit.SECONDS), "the thread is free once the disk returns");
            assertFalse(queuedRan.get(), "a read given up while queued never runs");
            assertEquals(2, answers.size());
        } finally {
            diskReturns.countDown();
            readers.close();
        }
    }

    @Test
    void aReadSubmittedWhileTheDiskIsFailedIsGivenUpAtOnce() {
        AtomicReference<String> failure = new AtomicReference<>("its disk /d failed: hangs");
        DiskReaders readers = new DiskReaders("test", 1, failure::get);
        try {
            AtomicBoolean ran = new AtomicBoolean();
            AtomicReference<String> answer = new AtomicReference<>();
            readers.execute(() -> ran.set(true), answer::set);
            assertEquals("its disk /d failed: hangs", answer.get(), "answered on the caller's thread");
            assertFalse(ran.get());
            assertEquals(0, readers.pending());
            assertEquals(1, readers.givenUp());
        } finally {
            readers.close();
        }
    }

    @Test
    void aReadThatEndedIsNotGivenUp() throws Exception {
        DiskReaders readers = new DiskReaders("test", 1);
        try {
            CountDownLatch done = new CountDownLatch(1);
            AtomicBoolean gaveUp = new AtomicBoolean();
            readers.execute(done::countDown, why -> gaveUp.set(true));
            assertTrue(done.await(WAIT_S, TimeUnit.SECONDS));
            waitFor(() -> readers.pending() == 0, "the ended read leaves the pending set");
            assertEquals(0, readers.giveUpAll("hangs"));
            assertFalse(gaveUp.get());
            assertEquals(0, readers.givenUp());
        } finally {
            readers.close();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
