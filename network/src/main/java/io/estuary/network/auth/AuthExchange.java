package io.estuary.network.auth;

import io.estuary.common.status.StatusCode;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The authentication exchange that follows the version handshake ({@code protocol.Handshake}) on every connection
 * whose agreed version is {@link #FIRST_VERSION} or newer. Integers are big-endian; strings are UTF-8 after an
 * unsigned short length.
 *
 * <pre>
 *   client AUTH_HELLO  short len + identity name ("" anonymous, "cluster", "app:&lt;id&gt;"), 32-byte client nonce
 *   server CHALLENGE   byte outcome: {@link #PROVE} then 32-byte server nonce + 32-byte server proof;
 *                      {@link #ADMITTED}: admitted without proof, the exchange is over;
 *                      else a StatusCode id + short len + message, and the server closes
 *   client PROOF       32-byte client proof (only after PROVE, and only once the server's proof checked out)
 *   server RESULT      byte StatusCode id (0 = OK) + short len + message; on failure the server closes
 *
 *   server proof = HMAC-SHA256(secret, "estuary server proof v6" | identity | client nonce | server nonce)
 *   client proof = HMAC-SHA256(secret, "estuary client proof v6" | identity | client nonce | server nonce)
 * </pre>
 *
 * No secret crosses the wire. Both nonces are fresh per connection, so a recorded proof is worth nothing on another
 * connection (replay); the two proofs are made under different labels, so a server's proof sent back as a client's
 * fails (reflection); the identity is inside the MAC, so a proof made for one identity does not pass for another.
 * Proofs are compared in constant time. Identity names are at most {@link #MAX_IDENTITY_BYTES} bytes, messages at
 * most {@link #MAX_MESSAGE_BYTES}.
 *
 * <p>Constants and static functions only, safe from any thread; callers own the buffers written to.
 */
public final class AuthExchange {
    private AuthExchange() {}

    /** The first protocol version with this exchange; protocol-5 peers (release 0.1.0) skip it. */
    public static final int FIRST_VERSION = 6;

    public static final int NONCE_BYTES = 32;
    public static final int PROOF_BYTES = 32;
    public static final int MAX_IDENTITY_BYTES = 512;
    public static final int MAX_MESSAGE_BYTES = 1024;

    /** CHALLENGE outcome: prove the identity; the server's nonce and proof follow. */
    public static final byte PROVE = 0;
    /** CHALLENGE outcome: admitted without proof. */
    public static final byte ADMITTED = 1;

    private static final byte[] SERVER_LABEL = "estuary server proof v6".getBytes(StandardCharsets.UTF_8);
    private static final byte[] CLIENT_LABEL = "estuary client proof v6".getBytes(StandardCharsets.UTF_8);
    private static final SecureRandom RANDOM = new SecureRandom();

    /** Whether a connection that agreed on {@code version} runs this exchange. */
    public static boolean runsAt(int version) {
        return version >= FIRST_VERSION;
    }

    /** A fresh random nonce. */
    public static byte[] nonce() {
        byte[] n = new byte[NONCE_BYTES];
        RANDOM.nextBytes(n);
        return n;
    }

    public static byte[] serverProof(byte[] secret, String identity, byte[] clientNonce, byte[] serverNonce) {
        return mac(secret, SERVER_LABEL, identity, clientNonce, serverNonce);
    }

    public static byte[] clientProof(byte[] secret, String identity, byte[] clientNonce, byte[] serverNonce) {
        return mac(secret, CLIENT_LABEL, identity, clientNonce, serverNonce);
    }

    /** Constant-time comparison of a received proof with the expected one. */
    public static boolean matches(byte[] expected, byte[] received) {
        return MessageDigest.isEqual(expected, received);
    }

    private static byte[] mac(byte[] secret, byte[] label, String identity, byte[] clientNonce, byte[] serverNonce) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            mac.update(label);
            byte[] id = identity.getBytes(StandardCharsets.UTF_8);
            mac.update((byte) (id.length >>> 8));
            mac.update((byte) id.length);
            mac.update(id);
            mac.update(clientNonce);
            mac.update(serverNonce);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available in this JVM", e);
        }
    }

    /** AUTH_HELLO: the identity's name ({@code ""} for anonymous) and the client's nonce. */
    public static void writeHello(ByteBuf out, String identity, byte[] clientNonce) {
        byte[] id = identity.getBytes(StandardCharsets.UTF_8);
        if (id.length > MAX_IDENTITY_BYTES) {
            throw new IllegalArgumentException("an identity name has at most " + MAX_IDENTITY_BYTES + " bytes");
        }
        out.writeShort(id.length).writeBytes(id).writeBytes(clientNonce);
    }

    /** A status byte and its message (cut to {@link #MAX_MESSAGE_BYTES}): a refusing CHALLENGE, or a RESULT. */
    public static void writeStatus(ByteBuf out, StatusCode status, String message) {
        byte[] m = bounded(message == null ? "" : message);
        out.writeByte(status.id()).writeShort(m.length).writeBytes(m);
    }

    private static byte[] bounded(String message) {
        byte[] m = message.getBytes(StandardCharsets.UTF_8);
        if (m.length <= MAX_MESSAGE_BYTES) return m;
        int chars = Math.min(message.length(), MAX_MESSAGE_BYTES);
        while (true) {
            m = message.substring(0, chars).getBytes(StandardCharsets.UTF_8);
            if (m.length <= MAX_MESSAGE_BYTES) return m;
            chars--;
        }
    }

    /**
     * Reads a status byte and its message when all of it is readable; returns null (reading nothing) when more bytes
     * are needed. Throws {@link IllegalArgumentException} for a message over {@link #MAX_MESSAGE_BYTES}.
     */
    public static Status readStatus(ByteBuf in) {
        if (in.readableBytes() < 3) return null;
        int len = in.getUnsignedShort(in.readerIndex() + 1);
        if (len > MAX_MESSAGE_BYTES) {
            throw new IllegalArgumentException("a message of " + len + " bytes (at most " + MAX_MESSAGE_BYTES + ")");
        }
        if (in.readableBytes() < 3 + len) return null;
        StatusCode code = StatusCode.of(in.readByte());
        in.skipBytes(2);
        return new Status(code, in.readCharSequence(len, StandardCharsets.UTF_8).toString());
    }

    /** A status and its message, as read from the wire. */
    public static final class Status {
        public final StatusCode code;
        public final String message;

        public Status(StatusCode code, String message) {
            this.code = code;
            this.message = message;
        }
    }
}
