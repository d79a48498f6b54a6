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
}
