package io.estuary.worker.storage;

import io.estuary.common.protocol.DiskStatus;
import io.estuary.common.time.Clock;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One health probe of a storage directory: writes a small file, fsyncs it, deletes it, and checks the free space
 * against the reserve. The outcome says what the disk looks like now. Blocking (it does real I/O, and may hang on a
 * hung disk): callers run it on a thread of its own. A probe's duration (against the slow threshold) is read on the
 * given {@link Clock}. Stateless and thread-safe.
 */
public final class DiskProbe {
    /** Name of the probe file, in the storage directory itself (never a partition path). */
    static final String PROBE_FILE = ".estuary-disk-probe";

    private static final int PROBE_BYTES = 4096;

    private final long reserveBytes;
    private final long slowNanos;
    private final Clock clock;

    public DiskProbe(long reserveBytes, long slowThresholdMs) {
        this(reserveBytes, slowThresholdMs, Clock.system());
    }

    public DiskProbe(long reserveBytes, long slowThresholdMs, Clock clock) {
        this.reserveBytes = reserveBytes;
        this.slowNanos = slowThresholdMs * 1_000_000L;
        this.clock = clock;
    }

    /** What one probe found. Immutable. */
    public static final class Outcome {
        /** The disk's state, or null when the probe says nothing about the disk (the process was out of files). */
        public final DiskStatus status;

        public final long usableBytes;
        public final long nanos;
        public final String reason;

        public Outcome(DiskStatus status, long usableBytes, long nanos, String reason) {
            this.status = status;
            this.usableBytes = usableBytes;
            this.nanos = nanos;
            this.reason = reason;
        }

        @Override
        public String toString() {
            return status + " (" + reason + ")";
        }
    }

    public Outcome probe(File dir) {
        long t0 = clock.nanos();
        if (!dir.isDirectory()) {
            return new Outcome(
                    DiskStatus.DISK_FAILED,
                    0,
                    clock.nanos() - t0,
                    dir + " is not a directory (gone, " + "unmounted or replaced)");
        }
        long usable = dir.getUsableSpace();
        Path probe = dir.toPath().resolve(PROBE_FILE);
        try {
            DiskHangInjection.await(probe.toFile());
            try (FileChannel ch = FileChannel.open(
                    probe, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer b = ByteBuffer.allocate(PROBE_BYTES);
                while (b.hasRemaining()) ch.write(b);
                ch.force(true);
            }
            Files.delete(probe);
        } catch (IOException | RuntimeException e) {
            long nanos = clock.nanos() - t0;
            switch (DiskErrors.classify(e)) {
                case NO_SPACE:
                    return new Outcome(DiskStatus.DISK_FULL, usable, nanos, "no space left writing " + probe);
                case TOO_MANY_OPEN_FILES:
                    return new Outcome(
                            null, usable, nanos, "probe not run, this process is out of file descriptors: " + e);
                default:
                    return new Outcome(DiskStatus.DISK_FAILED, usable, nanos, "writing " + probe + " failed: " + e);
            }
        }
        long nanos = clock.nanos() - t0;
        if (usable < reserveBytes) {
            return new Outcome(
                    DiskStatus.DISK_FULL,
                    usable,
                    nanos,
                    usable + " bytes usable, below the reserve of " + reserveBytes + " (estuary.worker.disk.reserve)");
        }
        if (nanos > slowNanos) {
            return new Outcome(
                    DiskStatus.DISK_SLOW,
                    usable,
                    nanos,
                    "a " + PROBE_BYTES + "-byte write + fsync took "
                            + nanos / 1_000_000 + " ms, over estuary.worker.disk.check.slowThreshold ("
                            + slowNanos / 1_000_000
                            + " ms)");
        }
        return new Outcome(DiskStatus.DISK_HEALTHY, usable, nanos, "probe took " + nanos / 1000 + " us");
    }
}
