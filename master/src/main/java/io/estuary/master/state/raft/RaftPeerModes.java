package io.estuary.master.state.raft;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.ratis.protocol.RaftPeerId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether this master opens its next connection to a peer with the authentication handshake. With
 * estuary.auth.mode=enforce always. In the permissive mode (a rolling upgrade from masters without authentication)
 * the handshake comes first too, and a peer that connects but never admits it (a master without authentication waits
 * for a Ratis frame instead of answering) is spoken to without one from then on; a peer that closes such a plain
 * connection before answering anything (it was restarted with authentication) gets the handshake again. Each switch
 * costs one failed call, which Ratis retries. Thread-safe.
 */
final class RaftPeerModes {
    private static final Logger LOG = LoggerFactory.getLogger(RaftPeerModes.class);

    private final boolean permissive;
    private final Set<RaftPeerId> plain = ConcurrentHashMap.newKeySet();

    RaftPeerModes(boolean permissive) {
        this.permissive = permissive;
    }

    /** Whether peers that do not authenticate are spoken to and admitted (estuary.auth.mode=permissive). */
    boolean permissive() {
        return permissive;
    }

    /** Whether the next connection to {@code peer} starts with the handshake. */
    boolean handshake(RaftPeerId peer) {
        return !permissive || !plain.contains(peer);
    }

    /** Connected, but the handshake did not admit this master: the peer may run without authentication. */
    void handshakeFailed(RaftPeerId peer) {
        if (permissive && plain.add(peer)) {
            LOG.warn(
                    "The master {} did not admit the Raft authentication handshake: speaking to it without one "
                            + "(estuary.auth.mode=permissive)",
                    peer);
        }
    }

    /** A connection without the handshake closed before any answer: the peer may authenticate its peers now. */
    void closedUnanswered(RaftPeerId peer) {
        if (plain.remove(peer)) {
            LOG.info(
                    "The master {} closed a connection without the Raft authentication handshake: "
                            + "authenticating to it again",
                    peer);
        }
    }
}
