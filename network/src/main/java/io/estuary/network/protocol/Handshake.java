package io.estuary.network.protocol;

import io.netty.buffer.ByteBuf;

/**
 * The first bytes on every connection, before any frame, on every port (control, push, fetch). Its layout never
 * changes, whatever later versions do to frames, so peers of any two releases can tell each other their versions:
 *
 * <pre>
 *   client hello   int magic "ESTU", int protocol version
 *   server answer  int magic "ESTU", int protocol version, byte accepted (1) or refused (0)
 * </pre>
 *
 * A server that does not speak the client's version answers "refused" and closes; the client then fails the
 * connect with {@code VERSION_MISMATCH} and a message naming both versions. So peers of different versions never
 * exchange a frame one of them could misread (the buffer underflows mid-job of CELEBORN-2242).
 *
 * <p>Constants and static functions only, safe from any thread; callers own the buffers written to.
 */
public final class Handshake {
    private Handshake() {}

    /** "ESTU" in ASCII. */
    public static final int MAGIC = 0x45535455;

    public static final int HELLO_SIZE = 8;
    public static final int ANSWER_SIZE = 9;

    public static void writeHello(ByteBuf out, int version) {
        out.writeInt(MAGIC).writeInt(version);
    }

    public static void writeAnswer(ByteBuf out, int version, boolean accepted) {
        out.writeInt(MAGIC).writeInt(version).writeByte(accepted ? 1 : 0);
    }

    /** Whether a server speaking {@code serverVersion} takes a client speaking {@code clientVersion}. */
    public static boolean compatible(int serverVersion, int clientVersion) {
        // One frame layout per release for now; a server that learns to speak older layouts widens this.
        return serverVersion == clientVersion;
    }

    /** The words both sides use to explain a refusal. */
    public static String mismatch(int clientVersion, String server, int serverVersion) {
        return "protocol version mismatch: this client speaks Estuary protocol " + clientVersion + ", " + server
                + " speaks protocol " + serverVersion + "; use client jars of the servers' release";
    }
}
