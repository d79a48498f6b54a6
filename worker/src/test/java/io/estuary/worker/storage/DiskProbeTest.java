package io.estuary.worker.storage;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.protocol.DiskStatus;
import io.estuary.common.time.Clock;
import io.estuary.testing.ManualClock;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The slow-disk threshold is judged on the probe's clock, so a test decides how long a probe "took". */
class DiskProbeTest {
    @TempDir
    Path tmp;

    /** A clock on which every probe of a real directory takes exactly {@code probeMs}: start and end are read once. */
    private static Clock probeTaking(long probeMs) {
        ManualClock manual = new ManualClock();
        boolean[] started = {false};
        return new Clock() {
            @Override
            public long millis() {
                return manual.millis();
            }

            @Override
            public synchronized long nanos() {
                if (started[0]) manual.advanceMillis(probeMs);
                started[0] = !started[0];
                return manual.nanos();
            }
        };
    }

    @Test
    void aProbeOverTheSlowThresholdOnTheClockIsSlowAndOneUnderItHealthy() throws Exception {
        File dir = Files.createDirectory(tmp.resolve("disk")).toFile();

        DiskProbe.Outcome slow = new DiskProbe(0, 100, probeTaking(150)).probe(dir);
        assertEquals(DiskStatus.DISK_SLOW, slow.status, slow.reason);
        assertEquals(150_000_000L, slow.nanos);
        assertTrue(slow.reason.contains("took 150 ms"), slow.reason);

        DiskProbe.Outcome healthy = new DiskProbe(0, 100, probeTaking(99)).probe(dir);
        assertEquals(DiskStatus.DISK_HEALTHY, healthy.status, healthy.reason);
        assertEquals(99_000_000L, healthy.nanos);

        // At the threshold exactly is not over it.
        assertEquals(DiskStatus.DISK_HEALTHY, new DiskProbe(0, 100, probeTaking(100)).probe(dir).status);
        assertFalse(new File(dir, DiskProbe.PROBE_FILE).exists(), "the probe cleans up");
    }
}
