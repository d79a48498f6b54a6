package io.estuary.client.read;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.EpochFiles;
import io.estuary.common.protocol.PartitionFiles;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.status.StatusCode;
import io.estuary.testing.ManualClock;
import org.junit.jupiter.api.Test;

/** What a failed copy costs, without a cluster: reopen, put aside, give up, and the waits before trying again. */
class CopyRetriesTest {
    private final ManualClock clock = new ManualClock();
    private final CopyRetries retries = new CopyRetries(
            new EstuaryConf()
                    .set(ClientConfig.FETCH_RETRIES_PER_COPY, "2")
                    .set(ClientConfig.FETCH_RETRIES_PER_PARTITION, "3")
                    .set(ClientConfig.FETCH_UNREACHABLE_TIMEOUT, "10s"),
            clock);

    /** One epoch of partition 4 with {@code copies} copies; the caller takes the copy that failed off it. */
    private static EpochRead epoch(int copies) {
        EpochFiles.Builder e = EpochFiles.newBuilder().setEpoch(1).setBytes(100);
        for (int i = 0; i < copies; i++)
            e.addCopies(PartitionLocation.newBuilder().setPartitionId(4));
        PartitionFiles pf = PartitionFiles.newBuilder().setPartitionId(4).build();
        return new EpochRead(4, e.build(), new PartitionCounts(pf));
    }

    @Test
    void aStreamDroppedWhileTheTaskWasAwayIsReopenedOnlyAfterProgress() {
        assertTrue(CopyRetries.droppedWhileAway(StatusCode.UNKNOWN_STREAM, true, false));
        assertTrue(CopyRetries.droppedWhileAway(StatusCode.CONNECTION_FAILED, true, true));
        assertFalse(CopyRetries.droppedWhileAway(StatusCode.CONNECTION_FAILED, true, false), "the worker may be gone");
        assertFalse(CopyRetries.droppedWhileAway(StatusCode.UNKNOWN_STREAM, false, false), "no chunk since the open");
        assertFalse(CopyRetries.droppedWhileAway(StatusCode.DISK_FAILED, true, true));
    }

    @Test
    void realLossGivesTheCopyUpWithoutCounting() {
        EpochRead e = epoch(2);
        EpochRead.CopyRead copy = e.copies.poll();
        assertNull(retries.failed(e, copy, StatusCode.DISK_FAILED, true, 3));
        assertNull(retries.failed(e, copy, null, true, 3)); // a corrupt batch: no status
        assertTrue(e.retry.isEmpty(), "given up, not put aside");
        assertEquals(0, copy.failures);
        assertEquals(0, copy.resumeChunk);
        assertEquals(-1, retries.nextWait(e), "nothing put aside: the epoch is lost");
        assertEquals("", CopyRetries.whyLost(e, null));
    }

    @Test
    void failuresBeforeTheWorkerAnsweredAreBoundedByTheUnreachableTimeoutOnly() {
        EpochRead e = epoch(1);
        EpochRead.CopyRead copy = e.copies.poll();
        for (int i = 0; i < 10; i++) {
            assertNull(retries.failed(e, copy, StatusCode.CONNECTION_FAILED, false, 0));
            assertEquals(0, copy.failures, "not counted against the copy");
            long wait = retries.nextWait(e);
            assertTrue(wait > 0 && wait <= 5000, "wait " + wait);
            e.copies.addAll(e.retry);
            e.retry.clear();
            e.copies.poll();
        }
        clock.advanceMillis(10_001);
        retries.failed(e, copy, StatusCode.CONNECTION_FAILED, false, 0);
        assertEquals(-1, retries.nextWait(e), "the unreachable timeout ran out");
        assertTrue(CopyRetries.whyLost(e, null).contains(ClientConfig.FETCH_UNREACHABLE_TIMEOUT.key()));

        retries.chunkReceived(); // a chunk came in: the timeout counts anew
        assertTrue(retries.nextWait(e) > 0);
    }

    @Test
    void failuresAfterTheWorkerAnsweredSpendThePerCopyThenThePerPartitionBudget() {
        EpochRead e = epoch(2);
        EpochRead.CopyRead a = e.copies.poll();
        assertNull(retries.failed(e, a, StatusCode.RETRY_LATER, true, 5));
        assertEquals(5, a.resumeChunk, "a retry goes on where it stopped");
        assertNull(retries.failed(e, a, StatusCode.UNKNOWN_STREAM, true, 6));
        assertEquals(2, e.retry.size(), "put aside each time");
        e.retry.clear();
        String givenUp = retries.failed(e, a, StatusCode.CONNECTION_FAILED, true, 7);
        assertNotNull(givenUp, "a third failure is more than retriesPerCopy allows");
        assertTrue(givenUp.contains(ClientConfig.FETCH_RETRIES_PER_COPY.key()), givenUp);
        assertTrue(e.retry.isEmpty());
        assertTrue(CopyRetries.whyLost(e, givenUp).contains(givenUp));

        EpochRead.CopyRead b = e.copies.poll();
        givenUp = retries.failed(e, b, StatusCode.RETRY_LATER, true, 1);
        assertEquals(1, b.failures);
        assertEquals(4, e.counts.failures);
        assertNotNull(givenUp, "the partition's fourth failure is more than retriesPerPartition allows");
        assertTrue(givenUp.contains(ClientConfig.FETCH_RETRIES_PER_PARTITION.key()), givenUp);
        assertTrue(e.retry.isEmpty());
    }
}
