package io.estuary.worker.storage;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.protocol.DiskStatus;
import io.estuary.testing.Waits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.Logger;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What an operator reads when a disk changes state: the checker's log lines, captured from the real log4j2 logger
 * with an appender of the test's own. A failed, full or slow disk is a WARN naming the disk, its states before and
 * after and why; a recovery is an INFO.
 */
class DiskCheckerLogTest {
    @TempDir
    Path tmp;

    /** Keeps every event logged to the logger it is added to. */
    private static final class Capture extends AbstractAppender {
        final List<LogEvent> events = new CopyOnWriteArrayList<>();

        Capture() {
            super("disk-checker-capture", null, null, true, Property.EMPTY_ARRAY);
        }

        @Override
        public void append(LogEvent event) {
            events.add(event.toImmutable());
        }

        LogEvent awaitEvent(String containing) throws InterruptedException {
            Waits.waitFor(() -> find(containing) != null, 20_000, "a log line containing '" + containing + "'");
            return find(containing);
        }

        private LogEvent find(String containing) {
            for (LogEvent e : events) {
                if (e.getMessage().getFormattedMessage().contains(containing)) return e;
            }
            return null;
        }
    }

    @Test
    void aDiskThatFailsIsLoggedAtWarnAndItsRecoveryAtInfo() throws Exception {
        Disk disk = new Disk(Files.createDirectory(tmp.resolve("logged-disk")).toFile(), 1, 1);
        AtomicReference<DiskProbe.Outcome> next =
                new AtomicReference<>(new DiskProbe.Outcome(DiskStatus.DISK_HEALTHY, 1L << 30, 1000, "fine"));
        DiskChecker checker = new DiskChecker(Collections.singletonList(disk), d -> next.get(), 20, 1000);
        Logger logger = (Logger) LogManager.getLogger(DiskChecker.class);
        Capture capture = new Capture();
        capture.start();
        logger.addAppender(capture);
        try {
            checker.start();
            next.set(new DiskProbe.Outcome(DiskStatus.DISK_FAILED, 0, 1000, "Input/output error (test)"));
            LogEvent failed = capture.awaitEvent("FAILED");
            assertEquals(Level.WARN, failed.getLevel());
            String text = failed.getMessage().getFormattedMessage();
            assertTrue(text.contains(disk.mountPoint()), text);
            assertTrue(text.contains("was " + DiskStatus.DISK_HEALTHY), text);
            assertTrue(text.contains("Input/output error (test)"), text);

            next.set(new DiskProbe.Outcome(DiskStatus.DISK_HEALTHY, 1L << 30, 1000, "fine again"));
            LogEvent recovered = capture.awaitEvent("healthy again");
            assertEquals(Level.INFO, recovered.getLevel());
            assertTrue(recovered.getMessage().getFormattedMessage().contains("was " + DiskStatus.DISK_FAILED));

            next.set(new DiskProbe.Outcome(DiskStatus.DISK_FULL, 10, 1000, "below the reserve (test)"));
            LogEvent full = capture.awaitEvent("below the reserve (test)");
            assertEquals(Level.WARN, full.getLevel());
            assertTrue(full.getMessage().getFormattedMessage().contains(DiskStatus.DISK_FULL.toString()));
        } finally {
            logger.removeAppender(capture);
            capture.stop();
            checker.close();
            disk.close();
        }
    }
}
