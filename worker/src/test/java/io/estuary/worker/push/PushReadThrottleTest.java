package io.estuary.worker.push;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.worker.storage.MemoryTracker;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/** Pausing and resuming reads on real (embedded) channels at each memory level. */
class PushReadThrottleTest {
    @Test
    void clientsPauseFirstReplicationLastAndEveryoneResumes() {
        MemoryTracker m = new MemoryTracker(1000);
        PushReadThrottle t = new PushReadThrottle(m);
        EmbeddedChannel client = new EmbeddedChannel();
        EmbeddedChannel peer = new EmbeddedChannel();
        t.opened(client);
        t.opened(peer);
        t.carriesReplicas(peer);
        assertTrue(client.config().isAutoRead());
        assertTrue(peer.config().isAutoRead());

        m.add(860); // PAUSE_PUSH
        assertFalse(client.config().isAutoRead());
        assertTrue(peer.config().isAutoRead(), "replication keeps flowing so primaries can acknowledge");

        EmbeddedChannel late = new EmbeddedChannel();
        t.opened(late); // opened during the pause: starts paused
        assertFalse(late.config().isAutoRead());

        m.add(100); // PAUSE_ALL
        assertFalse(peer.config().isAutoRead());
        assertEquals(3, t.pausedConnections());

        m.release(120); // 840: below the push mark, replication resumes
        assertTrue(peer.config().isAutoRead());
        assertFalse(client.config().isAutoRead());

        m.release(200); // 640: everyone resumes, including the connection opened during the pause
        assertTrue(client.config().isAutoRead());
        assertTrue(late.config().isAutoRead());
        assertEquals(0, t.pausedConnections());

        t.closed(client);
        m.add(900);
        assertTrue(client.config().isAutoRead(), "a closed connection is no longer touched");
        assertEquals(2, t.connections());
        for (EmbeddedChannel c : new EmbeddedChannel[] {client, peer, late}) c.finishAndReleaseAll();
    }

    /** A held client's connection is unread until its hold ends; replication is never held; holds are counted. */
    @Test
    void aHeldConnectionResumesWhenItsHoldEndsAndReplicationIsNeverHeld() throws Exception {
        MemoryTracker m = new MemoryTracker(1000);
        PushReadThrottle t = new PushReadThrottle(m);
        EmbeddedChannel client = new EmbeddedChannel();
        EmbeddedChannel peer = new EmbeddedChannel();
        t.opened(client);
        t.opened(peer);
        t.carriesReplicas(peer);
        t.hold(client, 40_000_000L, "alice");
        t.hold(peer, 40_000_000L, "alice");
        assertFalse(client.config().isAutoRead(), "held");
        assertTrue(peer.config().isAutoRead(), "replicas serve every application: never held");
        m.add(860);
        m.release(860); // a memory level change in between does not end the hold
        assertFalse(client.config().isAutoRead());
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!client.config().isAutoRead() && System.nanoTime() < deadline) {
            Thread.sleep(10);
            client.runScheduledPendingTasks();
        }
        assertTrue(client.config().isAutoRead(), "read again once the hold is over");
        assertEquals(0.04, t.heldSeconds().get("alice"), 1e-9);
        assertNull(t.heldSeconds().get("_unknown"));
        for (EmbeddedChannel c : new EmbeddedChannel[] {client, peer}) c.finishAndReleaseAll();
    }

    @Test
    void aTickRepairsAConnectionPausedBehindItsBack() {
        MemoryTracker m = new MemoryTracker(1000);
        PushReadThrottle t = new PushReadThrottle(m);
        EmbeddedChannel ch = new EmbeddedChannel();
        t.opened(ch);
        ch.config().setAutoRead(false); // however it happened
        m.tick();
        assertTrue(ch.config().isAutoRead());
        ch.finishAndReleaseAll();
    }

    @Test
    void aConnectionInTheMiddleOfAFrameIsReadUntilTheFrameIsWholeThenPaused() {
        MemoryTracker m = new MemoryTracker(1000);
        PushReadThrottle t = new PushReadThrottle(m);
        EmbeddedChannel midFrame = new EmbeddedChannel();
        EmbeddedChannel between = new EmbeddedChannel();
        t.opened(midFrame);
        t.opened(between);
        t.received(midFrame, 300, 0); // holds 300 bytes of a frame not yet whole

        m.add(860); // PAUSE_PUSH
        assertFalse(between.config().isAutoRead(), "a connection between frames pauses");
        assertTrue(
                midFrame.config().isAutoRead(), "one in the middle of a frame is read on: stopping strands its bytes");
        assertEquals(1, t.finishingConnections());
        m.tick();
        assertTrue(midFrame.config().isAutoRead(), "ticks do not stop it");

        t.received(midFrame, 500, 0); // more of the same frame
        assertTrue(midFrame.config().isAutoRead());
        t.received(midFrame, 40, 1); // the frame is whole (40 bytes of the next one came with it): now it pauses
        assertFalse(midFrame.config().isAutoRead());
        assertEquals(0, t.finishingConnections());
        m.tick();
        assertFalse(midFrame.config().isAutoRead(), "the next frame waits for the pause to end");

        t.received(between, 100, 0); // a paused connection read once (the idle check) that got part of a frame
        assertTrue(between.config().isAutoRead(), "a frame started while paused is finished too");
        t.received(between, 0, 1);
        assertFalse(between.config().isAutoRead());

        m.release(300); // 560: everyone resumes
        assertTrue(midFrame.config().isAutoRead());
        assertTrue(between.config().isAutoRead());
        for (EmbeddedChannel c : new EmbeddedChannel[] {midFrame, between}) c.finishAndReleaseAll();
    }
}
