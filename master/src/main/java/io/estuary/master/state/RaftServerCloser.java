package io.estuary.master.state;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.LifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes a master's Raft server so that its storage directory is released, as a master started again in this JVM
 * (a test, a retry on another port) needs: after a start that failed, and at close, where Ratis' own close may return
 * before its division has let go of the storage. Stateless; each call closes the server it is given.
 */
final class RaftServerCloser {
    private static final Logger LOG = LoggerFactory.getLogger(RaftServerCloser.class);
    /** How long close waits for Ratis to release the storage directory. */
    private static final long CLOSE_WAIT_SECONDS = 30;

    private RaftServerCloser() {}

    /**
     * Cleans up after {@code server.start()} threw {@code failure} (e.g. the Raft port is taken). Ratis then sets its
     * server back to NEW, and closing a NEW server does nothing, while the division it started keeps running and
     * holds the storage lock: the division itself is closed, so that a retry in this JVM can take the lock. What
     * closing throws is added to {@code failure}.
     */
    static void afterFailedStart(RaftServer server, RaftGroupId group, Exception failure) {
        try {
            server.getDivision(group).close();
        } catch (IOException | RuntimeException closing) {
            failure.addSuppressed(closing);
        }
        try {
            server.close();
        } catch (IOException | RuntimeException closing) {
            failure.addSuppressed(closing);
        }
    }

    /** Closes {@code server} and waits (up to 30 s) until its division has released the storage. */
    static void close(RaftServer server, RaftGroupId group) {
        RaftServer.Division division = null;
        try {
            division = server.getDivision(group);
        } catch (IOException | RuntimeException e) {
            // never started, or already closed: nothing holds the storage
        }
        // Ratis' close stops waiting for its own threads when the caller is interrupted.
        boolean interrupted = Thread.interrupted();
        try {
            server.close();
        } catch (IOException e) {
            LOG.warn("Closing the Raft server failed", e);
        }
        if (division != null)
            interrupted |= awaitClosed(division, server.getId().toString());
        if (interrupted) Thread.currentThread().interrupt();
    }

    /**
     * Waits until the division has released its storage. Ratis' close returns early when another thread is already
     * closing it (its pause monitor, say) or when the caller is interrupted; a master started again in this JVM
     * would then find the storage directory still locked. Returns whether this thread was interrupted meanwhile.
     */
    private static boolean awaitClosed(RaftServer.Division division, String selfId) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CLOSE_WAIT_SECONDS);
        boolean interrupted = false;
        while (division.getInfo().getLifeCycleState() != LifeCycle.State.CLOSED) {
            if (System.nanoTime() > deadline) {
                LOG.warn(
                        "The Raft server's division still closes after {} s ({}); its storage may stay locked. "
                                + "Its threads:{}",
                        CLOSE_WAIT_SECONDS,
                        division.getInfo().getLifeCycleState(),
                        threadsOf(selfId));
                break;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        return interrupted;
    }

    /** The stacks of this master's Raft threads (named after its id by Ratis), for a close that does not end. */
    private static String threadsOf(String selfId) {
        StringBuilder b = new StringBuilder();
        for (Map.Entry<Thread, StackTraceElement[]> t :
                Thread.getAllStackTraces().entrySet()) {
            if (!t.getKey().getName().startsWith(selfId)) continue;
            b.append("\n  ")
                    .append(t.getKey().getName())
                    .append(' ')
                    .append(t.getKey().getState());
            StackTraceElement[] frames = t.getValue();
            for (int f = 0; f < Math.min(frames.length, 12); f++)
                b.append("\n    at ").append(frames[f]);
        }
        return b.toString();
    }
}
