package io.estuary.network.protocol;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

/**
 * The negotiation rules of the {@link Handshake}, for every pairing a rolling upgrade creates: release 0.1.0 (exact
 * match on 5, outcomes 0 and 1 only), this release, and releases after it.
 */
class HandshakeTest {
    private static final ProtocolRange RELEASE_1 = ProtocolRange.only(5);

    /** What a 0.1.0 server answers: its version, accepted only on an exact match. */
    private static Handshake.Answer release1Answer(int hello) {
        return new Handshake.Answer(5, hello == 5 ? Handshake.ACCEPTED : Handshake.REFUSED);
    }

    @Test
    void theHighestVersionBothSpeakIsUsed() {
        ProtocolRange next = new ProtocolRange(5, 6);
        ProtocolRange afterNext = new ProtocolRange(6, 7);
        // client and server of one release
        assertEquals(6, agree(next, next));
        // newer client, older server: the server's newest
        assertEquals(5, agree(next, RELEASE_1));
        assertEquals(6, agree(afterNext, next));
        // older client, newer server: the client's newest
        assertEquals(5, agree(RELEASE_1, next));
        assertEquals(6, agree(next, afterNext));
        // two releases apart: no common version
        assertEquals(-1, agree(RELEASE_1, afterNext));
        assertEquals(-1, agree(afterNext, RELEASE_1));
    }

    @Test
    void aRelease1ClientSeesOnlyWhatItAccepts() {
        // 0.1.0 clients say hello 5 and take only outcome 1.
        Handshake.Answer a = Handshake.answer(ProtocolRange.THIS_RELEASE, 5);
        assertEquals(Handshake.ACCEPTED, a.outcome);
        assertEquals(5, a.version);
        assertEquals(Handshake.ACCEPTED, Handshake.answer(new ProtocolRange(5, 6), 5).outcome);
    }

    @Test
    void aNewerClientMeetsARelease1ServerByOneRetry() {
        ProtocolRange next = new ProtocolRange(5, 6);
        Handshake.Answer refusal = release1Answer(6);
        assertEquals(-1, Handshake.agreedVersion(next, 6, refusal));
        assertEquals(5, Handshake.retryVersion(next, 6, refusal));
        assertEquals(5, Handshake.agreedVersion(next, 5, release1Answer(5)));
        // never a second retry, and none for a client that does not speak the server's version
        assertEquals(-1, Handshake.retryVersion(next, 5, new Handshake.Answer(5, Handshake.REFUSED)));
        assertEquals(-1, Handshake.retryVersion(new ProtocolRange(6, 7), 7, release1Answer(7)));
    }

    @Test
    void outsideTheWindowIsRefusedOrLeftToTheClient() {
        Handshake.Answer tooOld = Handshake.answer(new ProtocolRange(6, 7), 5);
        assertEquals(Handshake.REFUSED, tooOld.outcome);
        assertEquals(7, tooOld.version, "a refusal names the server's newest version");
        Handshake.Answer tooNew = Handshake.answer(ProtocolRange.only(5), 7);
        assertEquals(Handshake.ACCEPTED_AT, tooNew.outcome);
        assertEquals(5, tooNew.version);
        assertEquals(-1, Handshake.agreedVersion(ProtocolRange.only(7), 7, tooNew), "the client does not speak 5");
    }

    @Test
    void mismatchNamesBothSides() {
        String m = Handshake.mismatch(new ProtocolRange(5, 6), "the server at h:1", "protocol 7");
        assertTrue(m.contains("protocols 5 to 6") && m.contains("protocol 7"), m);
    }

    /** The version a connection settles on, with the retry a client makes, or -1. */
    private static int agree(ProtocolRange client, ProtocolRange server) {
        int hello = client.newest();
        for (int attempt = 0; attempt < 2; attempt++) {
            Handshake.Answer a = server == RELEASE_1 ? release1Answer(hello) : Handshake.answer(server, hello);
            int agreed = Handshake.agreedVersion(client, hello, a);
            if (agreed > 0) {
                assertTrue(server.contains(agreed) && client.contains(agreed));
                return agreed;
            }
            hello = Handshake.retryVersion(client, hello, a);
            if (hello < 0) return -1;
        }
        return -1;
    }
}
