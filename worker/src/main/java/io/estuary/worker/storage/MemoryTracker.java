package io.estuary.worker.storage;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Off-heap memory the worker holds for pushed data, and its {@link MemoryPressure} level. Counts what is really
 * held (flush buffer capacity, pushes being forwarded to replicas), never what Netty's pools have reserved, so the
 * level falls as soon as flushes free memory. Given the JVM's {@link DirectMemory}, the level also rises with the
 * JVM's fill while flushing could bring that down ({@link #pressure}): the worker then pauses before the JVM refuses
 * an allocation.
 *
 * <p>Thread-safe. {@link #add} and {@link #release} are lock-free unless they cross a watermark; a level change is
 * decided under a lock that re-reads the count after publishing the new level, so a release racing with a pause
 * can never leave the worker paused with nothing held (the stuck pause of CELEBORN-2274). {@link #tick} re-announces
 * the level to every listener, a second guard against a missed change.
 */
public final class MemoryTracker {
    private static final Logger LOG = LoggerFactory.getLogger(MemoryTracker.class);

    /** Told the level on every change and every tick; must be quick, never block, and tolerate repeats. */
    public interface Listener {
        void onPressure(MemoryPressure level);
    }

    /**
     * The JVM's direct memory as a whole: every direct buffer (the pools' chunks, partly used ones included, receive
     * buffers, what other parts of the worker allocate) against the limit at which the JVM refuses to allocate. Both
     * must be cheap to read: they are read on every count that could cross a watermark.
     */
    public interface DirectMemory {
        long used();

        long max();
    }

    private final long limit;
    private final MemoryPressure.Watermarks marks;
    private final AtomicLong held = new AtomicLong();
    private final AtomicLong queuedForFlush = new AtomicLong();
    private final AtomicLong peak = new AtomicLong();
    private final AtomicLong pauses = new AtomicLong();
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();
    private volatile MemoryPressure level = MemoryPressure.NORMAL;
    /** Null: the level follows what is held alone. */
    private final DirectMemory direct;

    public MemoryTracker(long limit, double resumeRatio, double pausePushRatio, double pauseReplicateRatio) {
        this(limit, resumeRatio, pausePushRatio, pauseReplicateRatio, null);
    }

    /**
     * As above, the level also following the JVM's direct memory ({@code direct}, may be null): whatever fills it,
     * the worker pauses before the JVM refuses an allocation (see {@link #pressure}).
     */
    public MemoryTracker(
            long limit, double resumeRatio, double pausePushRatio, double pauseReplicateRatio, DirectMemory direct) {
        this.limit = limit;
        this.marks = new MemoryPressure.Watermarks(limit, resumeRatio, pausePushRatio, pauseReplicateRatio);
        this.direct = direct;
    }

    /** A tracker with the default watermarks. */
    public MemoryTracker(long limit) {
        this(limit, 0.7, 0.85, 0.95);
    }

    /**
     * The limit to use: the configured one, or half the JVM's direct memory limit when that is smaller (the rest is
     * left for receive buffers, connections' buffers and the pool's partly used chunks), so the bound follows the real
     * limit.
     */
    public static long effectiveLimit(long configured, long maxDirectMemory) {
        long cap = maxDirectMemory > 0 ? maxDirectMemory / 2 : Long.MAX_VALUE;
        return Math.min(configured, cap);
    }

    public void addListener(Listener l) {
        listeners.add(l);
        l.onPressure(level);
    }

    public void add(long bytes) {
        long now = held.addAndGet(bytes);
        if (now > peak.get()) peak.accumulateAndGet(now, Math::max);
        if (level.next(pressure(now), marks) != level) changeLevel();
    }

    public void release(long bytes) {
        long now = held.addAndGet(-bytes);
        if (level.next(pressure(now), marks) != level) changeLevel();
    }

    /**
     * What the level is decided on: the bytes held, or the JVM's direct memory in use mapped onto this tracker's
     * limit ({@code used / max * limit}) when that is more. Held bytes are a part of the direct memory in use; the
     * rest (the pools' partly used chunks, receive buffers, frames being read while paused) is usually covered by the
     * room left between this tracker's limit and the JVM's, but not always: with tens of thousands of small flush
     * buffers the pool's chunks reached the JVM's limit while held bytes were under the pause mark, and every
     * allocation after that failed (a closed connection, a lost answer). Mapped this way, the JVM's own fill pauses
     * and resumes the worker at the same fractions as held bytes do.
     *
     * <p>The JVM's fill counts only while flushing what the worker holds could bring it under the resume mark: past
     * that, what fills it is not the worker's to free, and a worker waiting for it would stay paused for good
     * (CELEBORN-1792, resume judged on the pools' reservations). It then decides on held bytes alone; an allocation
     * the JVM refuses is answered {@code RETRY_LATER} or closes one connection, and the worker goes on.
     */
    long pressure(long heldNow) {
        if (direct == null) return heldNow;
        long max = direct.max();
        if (max <= 0) return heldNow;
        long used = direct.used();
        if (used - heldNow > (double) marks.resume / limit * max) return heldNow;
        long mapped = (long) ((double) used / max * limit);
        return Math.max(heldNow, mapped);
    }

    private synchronized void changeLevel() {
        while (true) {
            MemoryPressure from = level;
            long now = held.get();
            long pressure = pressure(now);
            MemoryPressure to = from.next(pressure, marks);
            if (to == from) return;
            level = to; // published before the count is read again, so a concurrent release sees it or is seen
            if (from == MemoryPressure.NORMAL) pauses.incrementAndGet();
            if (pressure > now) {
                LOG.info(
                        "Memory {} -> {}: {} bytes held of {}, but the JVM's direct memory is {} of {} bytes full, as "
                                + "if {} were held ({})",
                        from,
                        to,
                        now,
                        limit,
                        direct.used(),
                        direct.max(),
                        pressure,
                        marks);
            } else {
                LOG.info("Memory {} -> {}: {} bytes held of {} ({})", from, to, now, limit, marks);
            }
            for (Listener l : listeners) l.onPressure(to);
        }
    }

    /** Re-checks the level and tells every listener; called on a timer. */
    public void tick() {
        if (level.next(pressure(held.get()), marks) != level) changeLevel();
        MemoryPressure l = level;
        for (Listener listener : listeners) listener.onPressure(l);
    }

    /** Bytes handed to a disk's flusher and not yet written: held, but already on their way out. */
    void flushQueued(long bytes) {
        queuedForFlush.addAndGet(bytes);
    }

    void flushDone(long bytes) {
        queuedForFlush.addAndGet(-bytes);
    }

    /** Held bytes not yet queued for a write: what flushing partial buffers can still free. */
    public long unqueued() {
        return held.get() - queuedForFlush.get();
    }

    /**
     * How many of the unqueued bytes to flush now: enough to bring what is buffered below the resume mark, and, when
     * the JVM's direct memory is the fuller ({@link #pressure}), enough to bring that below it too, as far as
     * flushing can (at most everything unqueued).
     */
    public long flushToResume() {
        long now = held.get();
        long unqueued = now - queuedForFlush.get();
        long byHeld = unqueued - marks.resume;
        long byDirect = Math.min(unqueued, pressure(now) - marks.resume);
        return Math.max(byHeld, byDirect);
    }

    public MemoryPressure level() {
        return level;
    }

    public MemoryPressure.Watermarks watermarks() {
        return marks;
    }

    public boolean paused() {
        return level != MemoryPressure.NORMAL;
    }

    public long held() {
        return held.get();
    }

    /** The most ever held at once. */
    public long peak() {
        return peak.get();
    }

    /** How many times the worker has paused (left NORMAL). */
    public long pauses() {
        return pauses.get();
    }

    public long limit() {
        return limit;
    }
}
