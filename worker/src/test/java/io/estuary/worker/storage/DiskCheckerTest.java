package io.estuary.worker.storage;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.protocol.DiskStatus;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.netty.buffer.Unpooled;
import java.io.File;
import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Disk health: error classification, the real probe, the checker's state transitions, and what writers do. */
class DiskCheckerTest {
    @TempDir
    Path tmp;

    @Test
    void errorsThatAreNotDiskFaultsAreToldApart() {
        assertEquals(DiskErrors.Kind.NO_SPACE, DiskErrors.classify(new IOException("No space left on device")));
        assertEquals(
                DiskErrors.Kind.NO_SPACE,
                DiskErrors.classify(new FileSystemException("/d/x", null, "Disk quota exceeded")));
        assertEquals(
                DiskErrors.Kind.TOO_MANY_OPEN_FILES,
                DiskErrors.classify(new FileSystemException("/d/x", null, "Too many open files")));
        assertEquals(
                DiskErrors.Kind.TOO_MANY_OPEN_FILES,
                DiskErrors.classify(new RuntimeException("wrapped", new IOException("Too many open files in system"))));
        assertEquals(DiskErrors.Kind.DISK_ERROR, DiskErrors.classify(new IOException("Input/output error")));
        assertEquals(
                DiskErrors.Kind.DISK_ERROR,
                DiskErrors.classify(new FileSystemException("/d/x", null, "Read-only file system")));
        assertEquals(DiskErrors.Kind.DISK_ERROR, DiskErrors.classify(new IOException()));
        assertEquals(DiskErrors.Kind.DISK_ERROR, DiskErrors.classify(new IllegalStateException("x")));
    }

    @Test
    void theRealProbeSeesHealthyFullSlowAndFailedDisks() throws IOException {
        File dir = Files.createDirectory(tmp.resolve("disk")).toFile();
        assertEquals(DiskStatus.DISK_HEALTHY, new DiskProbe(0, 60_000).probe(dir).status);
        assertFalse(new File(dir, DiskProbe.PROBE_FILE).exists(), "the probe cleans up");
        DiskProbe.Outcome full = new DiskProbe(Long.MAX_VALUE, 60_000).probe(dir);
        assertEquals(DiskStatus.DISK_FULL, full.status, full.reason);
        assertTrue(full.usableBytes > 0);
        assertEquals(DiskStatus.DISK_SLOW, new DiskProbe(0, 0).probe(dir).status);
        // A directory replaced by a file (works as root too, unlike chmod), and one whose probe path is blocked.
        File probeBlocked = Files.createDirectory(tmp.resolve("blocked")).toFile();
        Files.createDirectory(probeBlocked.toPath().resolve(DiskProbe.PROBE_FILE));
        DiskProbe.Outcome blocked = new DiskProbe(0, 60_000).probe(probeBlocked);
        assertEquals(DiskStatus.DISK_FAILED, blocked.status, blocked.reason);
        Files.delete(dir.toPath());
        Files.write(dir.toPath(), new byte[1]);
        DiskProbe.Outcome gone = new DiskProbe(0, 60_000).probe(dir);
        assertEquals(DiskStatus.DISK_FAILED, gone.status, gone.reason);
    }

    private static DiskProbe.Outcome outcome(DiskStatus s) {
        return new DiskProbe.Outcome(s, 1L << 30, 1000, "test says " + s);
    }

    @Test
    void theCheckerMovesDisksBetweenStatesReportsEachChangeAndSeesAHungDisk() throws Exception {
        Disk disk = new Disk(Files.createDirectory(tmp.resolve("d")).toFile(), 1, 1);
        AtomicReference<DiskProbe.Outcome> next = new AtomicReference<>(outcome(DiskStatus.DISK_HEALTHY));
        AtomicReference<CountDownLatch> hang = new AtomicReference<>();
        DiskChecker checker = new DiskChecker(
                Collections.singletonList(disk),
                d -> {
                    CountDownLatch h = hang.get();
                    if (h != null) {
                        try {
                            h.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    return next.get();
                },
                20,
                // Long enough that a GC pause or a starved CPU never times a probe out; only the hung step needs it
                // to fire, and waits longer.
                5_000);
        AtomicInteger transitions = new AtomicInteger();
        checker.onTransition(transitions::incrementAndGet);
        try {
            checker.start();
            assertEquals(DiskStatus.DISK_HEALTHY, disk.status());
            assertEquals(0, transitions.get());

            next.set(outcome(DiskStatus.DISK_FAILED));
            waitFor(() -> disk.status() == DiskStatus.DISK_FAILED, "failed");
            assertEquals(1, disk.failures());
            assertNotNull(disk.failure());
            assertFalse(disk.writable());
            int changes = transitions.get();
            assertTrue(changes >= 1);

            // Out of file descriptors says nothing about the disk: the state stays.
            next.set(new DiskProbe.Outcome(null, 1L << 30, 1000, "out of files"));
            Thread.sleep(100);
            assertEquals(DiskStatus.DISK_FAILED, disk.status());
            assertEquals(changes, transitions.get());

            next.set(outcome(DiskStatus.DISK_HEALTHY));
            waitFor(() -> disk.status() == DiskStatus.DISK_HEALTHY, "recovered");
            assertNull(disk.failure());
            assertTrue(disk.writable());
            assertEquals(1, disk.failures(), "recovering does not forget the failure");

            next.set(outcome(DiskStatus.DISK_FULL));
            waitFor(() -> disk.status() == DiskStatus.DISK_FULL, "full");
            assertEquals(1, disk.failures(), "full is not failed");
            assertFalse(disk.writable());
            next.set(outcome(DiskStatus.DISK_SLOW));
            waitFor(() -> disk.status() == DiskStatus.DISK_SLOW, "slow");
            assertTrue(disk.writable(), "a slow disk keeps its partitions");

            // A probe that hangs past the timeout marks the disk failed; once it returns healthy, the disk is back.
            next.set(outcome(DiskStatus.DISK_HEALTHY));
            CountDownLatch h = new CountDownLatch(1);
            hang.set(h);
            waitFor(() -> disk.status() == DiskStatus.DISK_FAILED, "a hung probe marks the disk failed");
            assertTrue(disk.reason().contains("did not finish"), disk.reason());
            assertEquals(2, disk.failures());
            hang.set(null);
            h.countDown();
            waitFor(() -> disk.status() == DiskStatus.DISK_HEALTHY, "the unhung disk is healthy again");
            assertTrue(transitions.get() >= changes + 5);
        } finally {
            checker.close();
            disk.close();
        }
    }

    @Test
    void writersRefuseDataOnFailedOrFullDisksAndFilesFromBeforeAFailureAreLost() throws Exception {
        Disk disk = new Disk(Files.createDirectory(tmp.resolve("w")).toFile(), 1, 1);
        MemoryTracker memory = new MemoryTracker(1 << 20);
        try {
            PartitionFileWriter committedBefore = writer(disk, memory, "a");
            committedBefore.append(Unpooled.wrappedBuffer(new byte[100]));
            CommittedFile file = committedBefore.commit().get(10, TimeUnit.SECONDS);
            assertNull(file.lostReason());
            assertTrue(file.file().length() == 100);

            PartitionFileWriter open = writer(disk, memory, "b");
            open.append(Unpooled.wrappedBuffer(new byte[100]));
            disk.set(DiskStatus.DISK_FULL, "test: full");
            StatusException full =
                    assertThrows(StatusException.class, () -> open.append(Unpooled.wrappedBuffer(new byte[1])));
            assertEquals(StatusCode.HARD_SPLIT, full.status());
            assertNull(file.lostReason(), "a full disk keeps serving");

            disk.markFailed("test: failed");
            StatusException failed =
                    assertThrows(StatusException.class, () -> open.append(Unpooled.wrappedBuffer(new byte[1])));
            assertEquals(StatusCode.DISK_FAILED, failed.status());
            assertNotNull(file.lostReason());

            disk.set(DiskStatus.DISK_HEALTHY, "test: healthy again");
            assertNotNull(file.lostReason(), "data committed before the failure stays lost");
            failed = assertThrows(StatusException.class, () -> open.append(Unpooled.wrappedBuffer(new byte[1])));
            assertEquals(StatusCode.DISK_FAILED, failed.status(), "a partition written across a failure stays refused");
            ExecutionException notCommitted =
                    assertThrows(ExecutionException.class, () -> open.commit().get(10, TimeUnit.SECONDS));
            assertTrue(
                    notCommitted.getCause().getMessage().contains("failed while it was written"),
                    notCommitted.getCause().getMessage());

            PartitionFileWriter after = writer(disk, memory, "c");
            after.append(Unpooled.wrappedBuffer(new byte[50]));
            CommittedFile fresh = after.commit().get(10, TimeUnit.SECONDS);
            assertNull(fresh.lostReason(), "a recovered disk is used again");
            assertEquals(50, fresh.file().length());
            assertEquals(0, memory.held());
        } finally {
            disk.close();
        }
    }

    private static PartitionFileWriter writer(Disk disk, MemoryTracker memory, String name) {
        return new PartitionFileWriter(name, new File(disk.dir(), name + ".data"), disk, memory, 4096, 1 << 20);
    }
}
