package io.estuary.worker.storage;

import java.io.File;
import java.io.InterruptedIOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Test hook: makes the file operations of a storage directory hang, as on a disk whose I/O never completes (a
 * dead device under a hard NFS mount, a suspended device-mapper target). Partition writes, disk probes, deletions and
 * the reads that serve fetches (stream opens, chunk reads) under a hung directory block until it is healed, or until their thread is interrupted (then they fail as an
 * interrupted I/O would). Can also make a directory's partition writes slow but working ({@link #slowWrites}), as
 * on an overloaded disk. Off unless a test calls {@link #hang} or {@link #slowWrites}: the write path then pays one
 * volatile read. Thread-safe.
 */
public final class DiskHangInjection {
    private DiskHangInjection() {}

    private static final Object LOCK = new Object();
    private static final Set<String> HUNG = ConcurrentHashMap.newKeySet();
    private static volatile boolean any;
    /** Directory prefix to the delay of each partition write under it. */
    private static final java.util.Map<String, Long> SLOW = new ConcurrentHashMap<>();

    private static volatile boolean anySlow;

    /** From now on, each partition write under {@code dir} takes {@code delayMs} longer (0: normal again). */
    public static void slowWrites(File dir, long delayMs) {
        if (delayMs > 0) SLOW.put(prefix(dir), delayMs);
        else SLOW.remove(prefix(dir));
        anySlow = !SLOW.isEmpty();
    }

    /** From now on, file operations under {@code dir} hang. */
    public static void hang(File dir) {
        HUNG.add(prefix(dir));
        any = true;
    }

    /** Lets the operations under {@code dir} go on (those hanging now complete). */
    public static void heal(File dir) {
        synchronized (LOCK) {
            HUNG.remove(prefix(dir));
            any = !HUNG.isEmpty();
            LOCK.notifyAll();
        }
    }

    /** Heals every directory, and makes every slow one normal. */
    public static void healAll() {
        SLOW.clear();
        anySlow = false;
        synchronized (LOCK) {
            HUNG.clear();
            any = false;
            LOCK.notifyAll();
        }
    }

    /** Blocks while {@code file} is under a hung directory. Called before each file operation of the worker's disks. */
    public static void await(File file) throws InterruptedIOException {
        if (!any) return;
        String path = prefix(file);
        synchronized (LOCK) {
            while (hungUnder(path)) {
                try {
                    LOCK.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted while " + file + " hangs (test hook)");
                }
            }
        }
    }

    /** Waits as long as a partition write of {@code file} is made slow to take. Called before each such write. */
    static void delayWrite(File file) throws InterruptedIOException {
        if (!anySlow) return;
        String path = prefix(file);
        for (java.util.Map.Entry<String, Long> e : SLOW.entrySet()) {
            if (!path.startsWith(e.getKey())) continue;
            try {
                Thread.sleep(e.getValue());
            } catch (InterruptedException x) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while writing " + file + " slowly (test hook)");
            }
            return;
        }
    }

    private static boolean hungUnder(String path) {
        for (String dir : HUNG) if (path.startsWith(dir)) return true;
        return false;
    }

    private static String prefix(File dir) {
        return dir.getAbsoluteFile().toPath().normalize() + File.separator;
    }
}
