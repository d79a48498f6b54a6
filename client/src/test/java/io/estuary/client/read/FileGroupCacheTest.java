package io.estuary.client.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.estuary.client.spec.ShuffleSpec;
import io.estuary.common.protocol.GetReducerFileGroupResponse;
import io.estuary.common.protocol.PartitionFiles;
import io.estuary.common.status.StatusCode;
import io.estuary.network.client.RemoteException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What a process keeps of where a shuffle's partitions are: which reads it serves from a kept answer, which ask the
 * driver, and that no reader under a newer epoch ever takes an answer from before it.
 */
class FileGroupCacheTest {
    private static final int MAPS = 3;
    private static final int PARTITIONS = 10;

    /** A driver that answers with the generation it is told and counts what it is asked. */
    static final class Driver {
        final AtomicInteger asked = new AtomicInteger();
        final List<String> requests = new ArrayList<>();
        volatile int generation;

        FileGroupCache.Lookup lookup() {
            return (start, end, startMap, endMap) -> {
                asked.incrementAndGet();
                synchronized (requests) {
                    requests.add(start + "-" + end + "/" + startMap + "-" + endMap);
                }
                GetReducerFileGroupResponse.Builder b = GetReducerFileGroupResponse.newBuilder()
                        .setEstuaryShuffleId(generation)
                        .setIntegrityChecked(true)
                        .setBatchCountsOnly(startMap != 0 || endMap != MAPS);
                for (int p = start; p < end; p++) {
                    b.addPartitions(
                            PartitionFiles.newBuilder().setPartitionId(p).setExpectedRecords(100L * generation + p));
                }
                for (int m = 0; m < MAPS; m++) b.addMapAttempts(m + generation);
                return b.build();
            };
        }
    }

    private static ShuffleSpec spec(int shuffleId) {
        return new ShuffleSpec("app-1", shuffleId, MAPS, PARTITIONS, "127.0.0.1", 1);
    }

    private static void assertPartitions(GetReducerFileGroupResponse r, int start, int end, int generation) {
        assertEquals(end - start, r.getPartitionsCount());
        for (int p = start; p < end; p++) {
            assertEquals(p, r.getPartitions(p - start).getPartitionId());
            assertEquals(100L * generation + p, r.getPartitions(p - start).getExpectedRecords());
        }
        assertEquals(generation, r.getEstuaryShuffleId());
        assertEquals(MAPS, r.getMapAttemptsCount());
        assertEquals(generation, r.getMapAttempts(0));
    }

    @Test
    void readersOfOneEpochAskOnceAndEachGetsItsPartitions() throws Exception {
        FileGroupCache cache = new FileGroupCache(1000, 8);
        Driver driver = new Driver();
        driver.generation = 1;
        assertPartitions(cache.get(spec(0), 5, 2, 4, 0, Integer.MAX_VALUE, driver.lookup()), 2, 4, 1);
        assertPartitions(cache.get(spec(0), 5, 0, 1, 0, MAPS, driver.lookup()), 0, 1, 1);
        assertPartitions(cache.get(spec(0), 5, 0, PARTITIONS, 0, MAPS, driver.lookup()), 0, PARTITIONS, 1);
        assertEquals(1, driver.asked.get(), "one lookup, for every partition and map");
        assertEquals("0-10/0-3", driver.requests.get(0));
        assertEquals(3, cache.lookupsAndHits()[0]);
        assertEquals(2, cache.lookupsAndHits()[1]);
    }

    @Test
    void aNewerEpochAsksAgainAndAnOlderOneNeverTakesTheNewerAnswer() throws Exception {
        FileGroupCache cache = new FileGroupCache(1000, 8);
        Driver driver = new Driver();
        driver.generation = 1;
        assertPartitions(cache.get(spec(0), 5, 0, 2, 0, MAPS, driver.lookup()), 0, 2, 1);
        driver.generation = 2; // a rerun: the engine raised its epoch
        assertPartitions(cache.get(spec(0), 6, 0, 2, 0, MAPS, driver.lookup()), 0, 2, 2);
        assertEquals(2, driver.asked.get());
        // A task of the old epoch still running asks for itself, and does not displace the newer answer.
        cache.get(spec(0), 5, 0, 2, 0, MAPS, driver.lookup());
        assertEquals(3, driver.asked.get());
        assertPartitions(cache.get(spec(0), 6, 3, 5, 0, MAPS, driver.lookup()), 3, 5, 2);
        assertEquals(3, driver.asked.get());
    }

    @Test
    void readsOfPartOfTheMapsAndTooWideShufflesAlwaysAsk() throws Exception {
        FileGroupCache cache = new FileGroupCache(PARTITIONS - 1, 8);
        Driver driver = new Driver();
        cache.get(spec(0), 1, 0, 1, 0, MAPS, driver.lookup());
        cache.get(spec(0), 1, 0, 1, 0, MAPS, driver.lookup());
        assertEquals(2, driver.asked.get(), "more partitions than kept: every read asks");

        FileGroupCache wide = new FileGroupCache(1000, 8);
        GetReducerFileGroupResponse part = wide.get(spec(0), 1, 0, 1, 1, 2, driver.lookup());
        assertEquals(true, part.getBatchCountsOnly(), "a read of some maps gets its own counts");
        wide.get(spec(0), 1, 0, 1, 1, 2, driver.lookup());
        assertEquals(4, driver.asked.get());
        assertEquals("0-1/1-2", driver.requests.get(3));
        wide.get(spec(0), 1, 5, PARTITIONS + 1, 0, MAPS, driver.lookup());
        assertEquals(
                "5-11/0-3", driver.requests.get(4), "a range past the shuffle goes to the driver, which refuses it");
    }

    @Test
    void aFailedLookupIsNotKeptAndForgottenShufflesAreAskedAgain() throws Exception {
        FileGroupCache cache = new FileGroupCache(1000, 8);
        Driver driver = new Driver();
        AtomicInteger failures = new AtomicInteger(1);
        FileGroupCache.Lookup flaky = (s, e, sm, em) -> {
            if (failures.getAndDecrement() > 0) {
                throw new RemoteException(StatusCode.SHUFFLE_DATA_LOST, "generation 0 was lost", null);
            }
            return driver.lookup().ask(s, e, sm, em);
        };
        RemoteException e = assertThrows(RemoteException.class, () -> cache.get(spec(0), 1, 0, 1, 0, MAPS, flaky));
        assertEquals(StatusCode.SHUFFLE_DATA_LOST, e.status());
        cache.get(spec(0), 1, 0, 1, 0, MAPS, flaky);
        assertEquals(1, driver.asked.get(), "the failure was not kept");
        cache.forget(spec(0));
        cache.get(spec(0), 1, 0, 1, 0, MAPS, flaky);
        cache.get(spec(1), 1, 0, 1, 0, MAPS, flaky);
        cache.forget(0); // the engine removed shuffle 0
        cache.get(spec(0), 1, 0, 1, 0, MAPS, flaky);
        cache.get(spec(1), 1, 0, 1, 0, MAPS, flaky);
        assertEquals(4, driver.asked.get());
    }

    @Test
    void concurrentFirstReadersShareOneLookupAndOnlyTheNewestShufflesAreKept() throws Exception {
        FileGroupCache cache = new FileGroupCache(1000, 2);
        Driver driver = new Driver();
        CountDownLatch release = new CountDownLatch(1);
        FileGroupCache.Lookup slow = (s, e, sm, em) -> {
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
            return driver.lookup().ask(s, e, sm, em);
        };
        ExecutorService tasks = Executors.newFixedThreadPool(8);
        try {
            List<Future<GetReducerFileGroupResponse>> reads = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int p = t;
                reads.add(tasks.submit(() -> cache.get(spec(0), 1, p, p + 1, 0, MAPS, slow)));
            }
            Thread.sleep(200);
            release.countDown();
            for (int t = 0; t < 8; t++) assertPartitions(reads.get(t).get(30, TimeUnit.SECONDS), t, t + 1, 0);
            assertEquals(1, driver.asked.get(), "eight tasks, one lookup");
        } finally {
            tasks.shutdownNow();
        }
        cache.get(spec(1), 1, 0, 1, 0, MAPS, driver.lookup());
        cache.get(spec(2), 1, 0, 1, 0, MAPS, driver.lookup()); // shuffle 0, least recently used, goes
        cache.get(spec(0), 1, 0, 1, 0, MAPS, driver.lookup());
        assertEquals(4, driver.asked.get());
    }

    @Test
    void aWholeAnswerIsItsOwnSlice() {
        GetReducerFileGroupResponse all = GetReducerFileGroupResponse.newBuilder()
                .addPartitions(PartitionFiles.newBuilder().setPartitionId(0))
                .build();
        assertSame(all, FileGroupCache.slice(all, 0, 1));
    }
}
