package io.estuary.client.lifecycle;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Epoch numbering under racing revives and splits: one new epoch at a time per partition, never two with one number. */
class EpochTableTest {
    private static PartitionLocation loc(int partition, int epoch, int port) {
        return PartitionLocation.newBuilder()
                .setPartitionId(partition)
                .setEpoch(epoch)
                .setWorker(WorkerAddress.newBuilder().setHost("w").setRpcPort(port))
                .build();
    }

    @Test
    void racingClaimsGetOneAllocationPerEpochAndEveryoneTheSameAnswer() throws Exception {
        int partitions = 4;
        List<PartitionLocation> first = new ArrayList<>();
        for (int p = 0; p < partitions; p++) first.add(loc(p, 0, 1000 + p));
        EpochTable table = new EpochTable(first);
        int threads = 8;
        AtomicInteger allocations = new AtomicInteger();
        List<Throwable> errors = java.util.Collections.synchronizedList(new ArrayList<>());
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < 2000; i++) {
                        int p = ThreadLocalRandom.current().nextInt(partitions);
                        int seen = table.current(p).getEpoch(); // the epoch this caller saw fail
                        EpochTable.Claim c = table.claim(p, seen);
                        if (c.mustAllocate) {
                            allocations.incrementAndGet();
                            int next = table.nextEpoch(p);
                            if (ThreadLocalRandom.current().nextInt(10) == 0) {
                                table.abandon(p, new IllegalStateException("no worker this time"));
                            } else {
                                table.install(p, loc(p, next, 2000 + next));
                            }
                        }
                        try {
                            PartitionLocation got = c.location.get();
                            if (got.getEpoch() <= seen)
                                throw new AssertionError("answer " + got.getEpoch() + " not past " + seen);
                        } catch (java.util.concurrent.ExecutionException abandoned) {
                            // the claimant gave up; a later failure claims again
                        }
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
            all.add(th);
            th.start();
        }
        start.countDown();
        for (Thread th : all) th.join();
        assertTrue(errors.isEmpty(), errors.toString());
        int installed = 0;
        for (int p = 0; p < partitions; p++) {
            Set<Integer> epochs = new HashSet<>();
            int expectedNext = 0;
            for (PartitionLocation l : table.all()) {
                if (l.getPartitionId() != p) continue;
                assertTrue(
                        epochs.add(l.getEpoch()), "partition " + p + " has two locations with epoch " + l.getEpoch());
                assertEquals(expectedNext++, l.getEpoch(), "epochs of partition " + p + " are consecutive");
            }
            installed += epochs.size() - 1;
        }
        assertTrue(installed > 0 && installed <= allocations.get(), installed + " installed of " + allocations.get());
    }

    @Test
    void aClaimForAnOldEpochGetsTheCurrentLocationWithoutAllocating() {
        EpochTable table = new EpochTable(java.util.Collections.singletonList(loc(0, 0, 1)));
        EpochTable.Claim c = table.claim(0, 0);
        assertTrue(c.mustAllocate);
        table.install(0, loc(0, 1, 2));
        EpochTable.Claim late = table.claim(0, 0);
        assertFalse(late.mustAllocate);
        assertEquals(1, late.location.join().getEpoch());
        assertThrows(IllegalStateException.class, () -> table.install(0, loc(0, 2, 3)), "unclaimed install");
    }
}
