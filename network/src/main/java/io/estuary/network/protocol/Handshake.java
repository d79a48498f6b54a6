package io.estuary.network.protocol;

import io.netty.buffer.ByteBuf;

/**
 * The first bytes on every connection, before any frame, on every port (control, push, fetch). Its layout has not
 * changed since protocol 4 (release 0.1.0) and never will, so peers of any two releases can tell each other their
 * versions:
 *
 * <pre>
 *   client hello   int magic "ESTU", int version      (the newest version the client speaks; once lower, see below)
 *   server answer  int magic "ESTU", int version, byte outcome
 * </pre>
 *
 * Each side speaks a {@link ProtocolRange}; the highest version both speak is used:
 *
 * <ul>
 *   <li>{@link #ACCEPTED} (1): the server speaks the hello's version; the connection uses it. The answer repeats it.
 *   <li>{@link #ACCEPTED_AT} (2): the hello's version is newer than the server's newest; the connection uses the
 *       server's newest, named in the answer, if the client speaks it (else the client closes, VERSION_MISMATCH).
 *       Only a client newer than the server sends such a hello, and every client from release 0.2.0 on knows this
 *       outcome.
 *   <li>{@link #REFUSED} (0): the hello's version is older than the server's oldest. The answer names the server's
 *       newest and the server closes; the client fails the connect with VERSION_MISMATCH naming both.
 * </ul>
 *
 * Release 0.1.0 speaks exactly 5 and knows only outcomes 0 and 1. A 0.1.0 client sends hello 5, which every server
 * whose range holds 5 accepts (outcome 1, as 0.1.0 expects). A 0.1.0 server refuses any other hello with its
 * version, 5; a newer client whose range holds that version then connects once more with hello 5
 * ({@link #retryVersion}), so it meets a 0.1.0 server at the cost of one refused connection (and the WARN that
 * server logs). Nothing else is ever sent before the answer, so neither side of 0.1.0 sees a byte it does not expect.
 *
 * <p>Constants and static functions only, safe from any thread; callers own the buffers written to.
 */
public final class Handshake {
    private Handshake() {}

    /** "ESTU" in ASCII. */
    public static final int MAGIC = 0x45535455;

    public static final int HELLO_SIZE = 8;
    public static final int ANSWER_SIZE = 9;

    /**
     * On a server's channel, the version the connection agreed on, set before the first frame is read: handlers send
     * a field introduced in a later version only to a peer whose agreed version has it.
     */
    public static final io.netty.util.AttributeKey<Integer> AGREED_VERSION =
            io.netty.util.AttributeKey.valueOf("estuary.protocolVersion");

    public static final byte REFUSED = 0;
    public static final byte ACCEPTED = 1;
    public static final byte ACCEPTED_AT = 2;

    /**
     * Whether {@code firstByte} opens a TLS record (a handshake or an alert): what a TLS peer sends where a hello or
     * an answer is expected. The magic's first byte is not one of them.
     */
    public static boolean isTlsRecord(short firstByte) {
        return firstByte == 0x16 || firstByte == 0x15;
    }

    public static void writeHello(ByteBuf out, int version) {
        out.writeInt(MAGIC).writeInt(version);
    }

    public static void writeAnswer(ByteBuf out, Answer answer) {
        out.writeInt(MAGIC).writeInt(answer.version).writeByte(answer.outcome);
    }

    /** A server's answer: the version it names and the outcome byte. */
    public static final class Answer {
        public final int version;
        public final byte outcome;

        public Answer(int version, byte outcome) {
            this.version = version;
            this.outcome = outcome;
        }

        public boolean accepted() {
            return outcome == ACCEPTED || outcome == ACCEPTED_AT;
        }
    }

    /** What a server speaking {@code server} answers to a hello of {@code helloVersion}. */
    public static Answer answer(ProtocolRange server, int helloVersion) {
        if (server.contains(helloVersion)) return new Answer(helloVersion, ACCEPTED);
        if (helloVersion > server.newest()) return new Answer(server.newest(), ACCEPTED_AT);
        return new Answer(server.newest(), REFUSED);
    }

    /**
     * The version a client speaking {@code client} uses after {@code answer} to its hello, or -1 when the two share
     * none it can reach on this connection (then {@link #retryVersion} says whether another hello may).
     */
    public static int agreedVersion(ProtocolRange client, int helloVersion, Answer answer) {
        if (answer.outcome == ACCEPTED) return helloVersion;
        if (answer.outcome == ACCEPTED_AT && client.contains(answer.version)) return answer.version;
        return -1;
    }

    /**
     * After a refusal naming {@code serverVersion}: the version to say hello with on a new connection, or -1 when
     * there is none. A server that refuses a version newer than its own is an exact-match server (release 0.1.0);
     * the client tries that server's version once if it speaks it.
     */
    public static int retryVersion(ProtocolRange client, int helloVersion, Answer answer) {
        if (answer.outcome != REFUSED) return -1;
        int retry = Math.min(client.newest(), answer.version);
        return retry != helloVersion && retry < helloVersion && client.contains(retry) ? retry : -1;
    }

    /** The words both sides use to explain a refusal. */
    public static String mismatch(ProtocolRange client, String server, String serverSpeaks) {
        return "protocol version mismatch: this client speaks Estuary " + client + ", " + server + " speaks "
                + serverSpeaks + "; the servers and clients of a cluster may be at most one release apart "
                + "(docs/upgrading.md)";
    }
}
