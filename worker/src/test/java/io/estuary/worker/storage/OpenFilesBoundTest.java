package io.estuary.worker.storage;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Thousands of partitions open at once hold no file descriptor each: a partition file is open only while one of
 * its buffers is written, so the worker's open files (this JVM's {@code /proc/self/fd}) stay near the flusher thread
 * count however many partitions are partly written. Linux only. The data then commits whole (length and CRC32).
 */
class OpenFilesBoundTest {
    private static final int PARTITIONS = 2_000;
    private static final int PUSH = 2_500;
    private static final int FLUSH_THREADS = 2;
    /** JVM noise (class loading, the sampler's own listing, log files) besides the flushers' open files. */
    private static final int SLACK = 64;

    @TempDir
    Path tmp;

    private static int openFiles() {
        String[] fds = new File("/proc/self/fd").list();
        return fds == null ? -1 : fds.length;
    }

    @Test
    void partlyWrittenPartitionsHoldNoOpenFiles() throws Exception {
        assumeTrue(openFiles() > 0, "needs /proc/self/fd (Linux)");
        EstuaryConf conf = new EstuaryConf()
                .set(WorkerConfig.STORAGE_DIRS, tmp.resolve("disk").toString())
                .set(WorkerConfig.FLUSH_BUFFER_SIZE, "4k")
                .set(WorkerConfig.FLUSH_MAX_AGE, "10min") // the last push stays buffered
                .set(WorkerConfig.FLUSH_THREADS_PER_DISK, String.valueOf(FLUSH_THREADS));
        StorageManager storage = new StorageManager(conf);
        Disk disk = storage.disks().get(0);
        AtomicBoolean sampling = new AtomicBoolean(true);
        AtomicInteger peak = new AtomicInteger();
        int baseline = openFiles();
        Thread sampler = new Thread(
                () -> {
                    while (sampling.get()) {
                        peak.accumulateAndGet(openFiles(), Math::max);
                        java.util.concurrent.locks.LockSupport.parkNanos(200_000);
                    }
                },
                "fd-sampler");
        try {
            sampler.start();
            List<PartitionFileWriter> writers = new ArrayList<>();
            CRC32[] crcs = new CRC32[PARTITIONS];
            Random random = new Random(7);
            for (int p = 0; p < PARTITIONS; p++) {
                writers.add(storage.newWriter("app-open-files", 0, p, 0, disk.mountPoint()));
                crcs[p] = new CRC32();
            }
            // Two pushes fill a 4k buffer past the threshold (written), the third stays buffered: every partition has a
            // file on disk and data in memory, as in the middle of a map stage.
            for (int round = 0; round < 3; round++) {
                for (int p = 0; p < PARTITIONS; p++) {
                    byte[] data = new byte[PUSH];
                    random.nextBytes(data);
                    crcs[p].update(data);
                    writers.get(p)
                            .append(PooledByteBufAllocator.DEFAULT
                                    .directBuffer(PUSH)
                                    .writeBytes(data));
                }
            }
            for (int p = 0; p < PARTITIONS; p++) {
                File f = new File(new File(new File(disk.dir(), "app-open-files"), "0"), p + "-0.data");
                waitFor(() -> f.length() >= 2L * PUSH, 60_000, "partition " + p + " is written");
                assertEquals(PUSH, writers.get(p).bufferedBytes(), "partition " + p + " keeps its last push in memory");
            }
            int partlyWritten = openFiles();
            sampling.set(false);
            sampler.join();
            System.out.println("OPEN FILES: " + baseline + " before, peak " + peak.get() + " while " + PARTITIONS
                    + " partitions were written, " + partlyWritten + " with all of them partly written");
            assertTrue(
                    peak.get() - baseline <= FLUSH_THREADS + SLACK,
                    "open files rose from " + baseline + " to " + peak.get() + " while " + PARTITIONS
                            + " partitions were written");
            assertTrue(
                    partlyWritten - baseline <= SLACK,
                    partlyWritten + " files open with every partition partly " + "written (" + baseline + " before)");

            for (int p = 0; p < PARTITIONS; p++) {
                CommittedFile c = writers.get(p).commit().get(60, TimeUnit.SECONDS);
                assertEquals(3L * PUSH, c.length(), "partition " + p);
                CRC32 onDisk = new CRC32();
                onDisk.update(Files.readAllBytes(c.file().toPath()));
                assertEquals(crcs[p].getValue(), onDisk.getValue(), "CRC32 of partition " + p);
            }
        } finally {
            sampling.set(false);
            sampler.join();
            storage.close();
        }
    }
}
