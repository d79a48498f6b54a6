package io.estuary.worker.push;

import io.estuary.worker.storage.MemoryPressure;
import io.estuary.worker.storage.MemoryTracker;
import io.netty.channel.Channel;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Back-pressure on the push port: stops reading from connections while the worker's memory is under pressure and
 * resumes them when it is not, instead of refusing pushes it has already received. Clients' connections pause at
 * {@link MemoryPressure#PAUSE_PUSH}; connections that carry replicas from other workers only at
 * {@link MemoryPressure#PAUSE_ALL}. A paused client simply waits for its acknowledgements; its socket buffers fill
 * and TCP slows it down.
 *
 * <p>A frame already started is finished first: a connection that holds part of a frame when its reading would
 * stop (or that receives part of one while paused) is read on until that frame is whole, then paused. The bytes of
 * an unfinished frame count as held memory and are freed only when the frame completes (or the connection goes), so
 * a paused connection stuck mid-frame would keep the worker paused for good. What one connection may hold unfinished
 * is bounded by the push port's frame limit; a peer that sends part of a frame and then nothing is closed by the
 * server's idle timeout (being read, it is not held back, so its silence is its own).
 *
 * <p>Thread-safe. Every connection is tracked from the moment it opens, so one opened during a pause starts paused
 * and resumes with the rest. A connection's reading is decided under its own lock from the current level, so the
 * last decision always reflects the newest level; {@link MemoryTracker#tick} repeats it regularly besides.
 */
public final class PushReadThrottle implements MemoryTracker.Listener {
    private final MemoryTracker memory;
    /** Open push-port connections. */
    private final Map<Channel, Connection> channels = new ConcurrentHashMap<>();

    private final AtomicLong pausedReads = new AtomicLong();

    /** What the throttle knows of one connection; guarded by the channel's lock. */
    private static final class Connection {
        volatile boolean replication;
        /** Bytes received short of a whole frame. */
        long unfinished;
        /** Read on while paused: it holds a frame started before (or while) it was paused. */
        volatile boolean finishing;
        /** Not read before this (System.nanoTime), its application's pushes being over their allowed rate. */
        long heldUntil = System.nanoTime();
    }

    public PushReadThrottle(MemoryTracker memory) {
        this.memory = memory;
        memory.addListener(this);
    }

    public void opened(Channel ch) {
        channels.put(ch, new Connection());
        apply(ch);
    }

    /** Marks a connection as carrying replicas (seen from the locations it pushes to). */
    public void carriesReplicas(Channel ch) {
        Connection c = channels.get(ch);
        if (c != null && !c.replication) {
            c.replication = true;
            apply(ch);
        }
    }

    /**
     * What the connection's frame decoder reports after each read: the bytes it holds short of a whole frame and the
     * frames the read completed. A read that completed no frame but holds part of one is in the middle of a frame: it
     * is read on. One that completed a frame has finished what it started, and pauses if the level says so.
     */
    public void received(Channel ch, long unfinished, int framesCompleted) {
        Connection c = channels.get(ch);
        if (c == null) return;
        synchronized (ch) {
            c.unfinished = unfinished;
            c.finishing = unfinished > 0 && framesCompleted == 0;
            apply(ch, false);
        }
    }

    public void closed(Channel ch) {
        channels.remove(ch);
    }

    /**
     * Leaves a client's connection unread for {@code nanos} (congestion control's {@code holdNanos}: its application
     * pushes faster than it may), counting the time against {@code who} (a user, for metrics). Never a connection
     * that carries replicas, which serves every application of the worker that forwards them.
     */
    public void hold(Channel ch, long nanos, String who) {
        Connection c = channels.get(ch);
        if (c == null || nanos <= 0 || c.replication) return;
        long now = System.nanoTime();
        long until = now + nanos;
        long added;
        synchronized (ch) {
            if (until - c.heldUntil <= 0) return;
            // Only the time this hold adds to one still running counts.
            added = until - (c.heldUntil - now > 0 ? c.heldUntil : now);
            c.heldUntil = until;
            apply(ch, true);
        }
        heldNanos
                .computeIfAbsent(heldLabel(who), k -> new java.util.concurrent.atomic.LongAdder())
                .add(added);
        ch.eventLoop().schedule(() -> apply(ch), nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /** Users with a series of their own in {@link #heldSeconds}; the rest count under {@code _other}. */
    static final int MAX_HELD_USERS = 200;

    private final Map<String, java.util.concurrent.atomic.LongAdder> heldNanos = new ConcurrentHashMap<>();

    private String heldLabel(String who) {
        String label = who == null || who.isEmpty() ? "_unknown" : who.startsWith("_") ? "_" + who : who;
        return heldNanos.containsKey(label) || heldNanos.size() < MAX_HELD_USERS ? label : "_other";
    }

    /** Seconds connections went unread to hold their applications to their allowed rate, by user. */
    public Map<String, Double> heldSeconds() {
        Map<String, Double> out = new java.util.TreeMap<>();
        for (Map.Entry<String, java.util.concurrent.atomic.LongAdder> e : heldNanos.entrySet()) {
            out.put(e.getKey(), e.getValue().sum() / 1e9);
        }
        return out;
    }

    @Override
    public void onPressure(MemoryPressure level) {
        for (Channel ch : channels.keySet()) apply(ch);
    }

    private void apply(Channel ch) {
        apply(ch, true);
    }

    /** @param levelCheck the level may have changed: a connection read until now finishes the frame it holds */
    private void apply(Channel ch, boolean levelCheck) {
        synchronized (ch) {
            Connection c = channels.get(ch);
            if (c == null) return; // closed
            boolean allowed = memory.level().reads(c.replication) && System.nanoTime() - c.heldUntil >= 0;
            // Stopping now would strand part of a frame: finish it first.
            if (levelCheck && !allowed && ch.config().isAutoRead() && c.unfinished > 0) c.finishing = true;
            if (allowed) c.finishing = false;
            boolean read = allowed || c.finishing;
            if (ch.config().isAutoRead() != read) {
                if (!read) pausedReads.incrementAndGet();
                ch.config().setAutoRead(read);
            }
        }
    }

    /** Connections read on while paused to finish a frame they started. */
    public int finishingConnections() {
        int n = 0;
        for (Connection c : channels.values()) if (c.finishing) n++;
        return n;
    }

    /** Open connections not being read now. */
    public int pausedConnections() {
        int n = 0;
        for (Channel ch : channels.keySet()) if (!ch.config().isAutoRead()) n++;
        return n;
    }

    /** How many times a connection was paused. */
    public long pausedReads() {
        return pausedReads.get();
    }

    public int connections() {
        return channels.size();
    }
}
