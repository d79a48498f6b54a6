package io.estuary.master.state.raft;

import static org.junit.jupiter.api.Assertions.*;

import org.apache.ratis.protocol.RaftPeerId;
import org.junit.jupiter.api.Test;

class RaftPeerModesTest {
    private final RaftPeerId m1 = RaftPeerId.valueOf("m1");
    private final RaftPeerId m2 = RaftPeerId.valueOf("m2");

    @Test
    void anEnforcingMasterAlwaysAuthenticates() {
        RaftPeerModes modes = new RaftPeerModes(false);
        modes.handshakeFailed(m1);
        assertTrue(modes.handshake(m1), "never falls back to a plain connection");
        assertFalse(modes.permissive());
    }

    @Test
    void aPermissiveMasterFallsBackPerPeerAndReturnsToTheHandshakeWhenRefused() {
        RaftPeerModes modes = new RaftPeerModes(true);
        assertTrue(modes.handshake(m1), "the handshake first");
        modes.handshakeFailed(m1);
        assertFalse(modes.handshake(m1), "a peer that never admitted it is spoken to plainly");
        assertTrue(modes.handshake(m2), "per peer");
        modes.closedUnanswered(m1);
        assertTrue(modes.handshake(m1), "a peer that closes a plain connection unanswered gets the handshake again");
    }
}
