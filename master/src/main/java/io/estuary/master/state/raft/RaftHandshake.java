package io.estuary.master.state.raft;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The handshake that opens every connection to a master's Raft port when authentication is on, before any Ratis
 * byte: both sides prove they hold the cluster secret without sending it.
 *
 * <pre>
 * client -> HELLO     : int magic "ERAF", byte version (1), 32-byte client nonce
 * server -> CHALLENGE : 32-byte server nonce, 32-byte server proof
 * client -> PROOF     : 32-byte client proof (a client that finds the server proof wrong closes instead)
 * server -> RESULT    : byte 0 = admitted, anything else = refused (the server then closes)
 * server proof = HMAC-SHA256(secret, "estuary raft server proof v1" | clientNonce | serverNonce)
 * client proof = HMAC-SHA256(secret, "estuary raft client proof v1" | clientNonce | serverNonce)
 * </pre>
 *
 * Both nonces are fresh per connection, so a recorded handshake cannot be replayed; the labels differ by side (so a
 * proof cannot be reflected) and from those of Estuary's other ports (so a proof made there is worthless here).
 * Proofs are compared in constant time. Stateless and thread-safe.
 */
public final class RaftHandshake {
    private RaftHandshake() {}

    static final int MAGIC = 0x45524146; // "ERAF"
    static final byte VERSION = 1;
    static final int NONCE_BYTES = 32;
    static final int PROOF_BYTES = 32;
    static final int HELLO_BYTES = 4 + 1 + NONCE_BYTES;
    static final int CHALLENGE_BYTES = NONCE_BYTES + PROOF_BYTES;
    static final byte ADMITTED = 0;
    static final byte REFUSED = 1;
    /** A secret shorter than this is refused: it could be guessed. */
    public static final int MIN_SECRET_BYTES = 16;

    private static final byte[] SERVER_LABEL = "estuary raft server proof v1".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CLIENT_LABEL = "estuary raft client proof v1".getBytes(StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();

    /**
     * Whether {@code in} (two bytes or more readable) opens like a TLS record: a handshake or alert record of TLS 1.x
     * (content type 22 or 21, major version 3). Neither the handshake's magic nor a Ratis frame (a varint length, then a
     * protobuf tag, and tag byte 3 is field 0, which does not exist) can start that way.
     */
    static boolean looksLikeTls(org.apache.ratis.thirdparty.io.netty.buffer.ByteBuf in) {
        if (in.readableBytes() < 2) return false;
        byte type = in.getByte(in.readerIndex());
        return (type == 22 || type == 21) && in.getByte(in.readerIndex() + 1) == 3;
    }

    static byte[] nonce() {
        byte[] n = new byte[NONCE_BYTES];
        RANDOM.nextBytes(n);
        return n;
    }

    static byte[] serverProof(byte[] secret, byte[] clientNonce, byte[] serverNonce) {
        return hmac(secret, SERVER_LABEL, clientNonce, serverNonce);
    }

    static byte[] clientProof(byte[] secret, byte[] clientNonce, byte[] serverNonce) {
        return hmac(secret, CLIENT_LABEL, clientNonce, serverNonce);
    }

    /** Constant time, so a peer cannot learn a proof byte by byte from how long a refusal takes. */
    static boolean matches(byte[] expected, byte[] presented) {
        return MessageDigest.isEqual(expected, presented);
    }

    /** Checks a cluster secret is usable here; returns a copy so the caller's array may be wiped. */
    public static byte[] checkSecret(byte[] secret) {
        if (secret == null || secret.length < MIN_SECRET_BYTES) {
            throw new IllegalArgumentException(
                    "the cluster secret must hold at least " + MIN_SECRET_BYTES + " bytes to authenticate Raft peers");
        }
        return secret.clone();
    }

    private static byte[] hmac(byte[] secret, byte[] label, byte[] clientNonce, byte[] serverNonce) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            mac.update(label);
            mac.update(clientNonce);
            mac.update(serverNonce);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }
}
