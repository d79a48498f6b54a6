package io.estuary.worker.storage;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.testing.ManualClock;
import io.netty.buffer.Unpooled;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Real writers on a temporary disk: partial buffers are written under pressure, largest first, and by age. */
class BufferedDataFlusherTest {
    private Path dir;
    private Disk disk;

    @BeforeEach
    void setUp() throws Exception {
        dir = Files.createTempDirectory("estuary-flush");
        disk = new Disk(dir.toFile(), 1, 1);
    }

    @AfterEach
    void tearDown() throws Exception {
        disk.close();
        StorageManager.deleteTree(dir);
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new java.util.Random(seed).nextBytes(b);
        return b;
    }

    /** Dates the writers' buffers; the flushers of the age tests read it too. */
    private final ManualClock clock = new ManualClock();

    private PartitionFileWriter writer(MemoryTracker m, BufferedDataFlusher f, int i) {
        PartitionFileWriter w = new PartitionFileWriter(
                "p" + i, new File(dir.toFile(), i + ".data"), disk, m, 1 << 20, 8 << 20, 0, clock);
        f.track(w);
        return w;
    }

    @Test
    void underPressureTheLargestPartialBuffersAreWrittenUntilBelowResume() throws Exception {
        // Partitions none near their 1 MiB flush size, each larger than the last, appended until together they cross
        // the pause mark of a 2 MiB limit. Nothing is written before that (the age limit is an hour), so the relief the
        // crossing starts sees every partition, and no append races it.
        MemoryTracker m = new MemoryTracker(2 << 20);
        BufferedDataFlusher f = new BufferedDataFlusher(m, 3_600_000);
        List<PartitionFileWriter> ws = new ArrayList<>();
        List<byte[]> pushed = new ArrayList<>();
        try {
            long total = 0;
            for (int i = 0; m.pauses() == 0; i++) {
                assertTrue(i < 1000, "setup must cross the pause mark: " + m.held() + " held");
                PartitionFileWriter w = writer(m, f, i);
                ws.add(w);
                byte[] data = random(8_000 + i * 300, i);
                pushed.add(data);
                w.append(Unpooled.wrappedBuffer(data));
                total += data.length;
            }
            assertTrue(ws.size() > 10, "the pause came after " + ws.size() + " partitions");
            waitFor(() -> m.level() == MemoryPressure.NORMAL, "the worker resumes");
            assertTrue(m.held() < m.watermarks().resume(), "held " + m.held());
            assertTrue(f.earlyFlushes() > 0);
            // Largest first: the largest partition was written, the smallest was not needed.
            assertEquals(0, ws.get(ws.size() - 1).bufferedBytes());
            assertTrue(ws.get(0).bufferedBytes() > 0);
            long onDisk = 0;
            for (int i = 0; i < ws.size(); i++) {
                CommittedFile c = ws.get(i).commit().get();
                assertEquals(c.length(), c.file().exists() ? c.file().length() : 0);
                assertArrayEquals(pushed.get(i), Files.readAllBytes(c.file().toPath()), "partition " + i + "'s bytes");
                onDisk += c.length();
            }
            assertEquals(total, onDisk, "early flushes lose or double nothing");
            assertEquals(0, m.held());
        } finally {
            f.close();
            for (PartitionFileWriter w : ws) w.destroy(); // a failed test must not also leak the buffers
        }
    }

    @Test
    void oldPartialBuffersAreWrittenWithoutPressure() throws Exception {
        MemoryTracker m = new MemoryTracker(1L << 30);
        long maxAgeMs = 3_600_000; // an hour: only the test's clock can make the buffer that old
        BufferedDataFlusher f = new BufferedDataFlusher(m, maxAgeMs, clock);
        try {
            PartitionFileWriter w = writer(m, f, 0);
            byte[] first = random(1000, 1);
            byte[] second = random(500, 2);
            w.append(Unpooled.wrappedBuffer(first));
            assertTrue(m.held() > 0);
            clock.advanceMillis(maxAgeMs + 1);
            waitFor(() -> w.bufferedBytes() == 0 && m.held() == 0, "the old buffer is written");
            waitFor(() -> new File(dir.toFile(), "0.data").length() == 1000, "the file holds it");
            w.append(Unpooled.wrappedBuffer(second));
            assertEquals(1500, w.commit().get().length());
            assertEquals(1500, new File(dir.toFile(), "0.data").length());
            byte[] expected = new byte[1500];
            System.arraycopy(first, 0, expected, 0, 1000);
            System.arraycopy(second, 0, expected, 1000, 500);
            assertArrayEquals(expected, Files.readAllBytes(new File(dir.toFile(), "0.data").toPath()));
        } finally {
            f.close();
        }
    }
}
