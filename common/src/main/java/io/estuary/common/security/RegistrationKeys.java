package io.estuary.common.security;

import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.X509EncodedKeySpec;
import javax.crypto.KeyAgreement;

/**
 * The key agreement behind registering an application without sending its secret in clear: the master leader and
 * the lifecycle manager each hold an EC P-256 key pair (the leader's lives as long as its process, the manager's
 * for one registration), and both derive the same sealing key from ECDH, bound to the application and a nonce.
 * Works on Java 8. Stateless, thread-safe.
 */
public final class RegistrationKeys {
    private static final byte[] LABEL = Hmac.utf8("estuary registration v1");

    private RegistrationKeys() {}

    /** A new EC P-256 key pair. */
    public static KeyPair generate() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
            g.initialize(new ECGenParameterSpec("secp256r1"));
            return g.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("EC P-256 is part of every Java runtime", e);
        }
    }

    /** The public key of a peer, from its X.509 encoding ({@link PublicKey#getEncoded()}). */
    public static PublicKey publicKey(byte[] x509) throws GeneralSecurityException {
        return KeyFactory.getInstance("EC").generatePublic(new X509EncodedKeySpec(x509));
    }

    /**
     * The 32-byte key that seals application {@code appId}'s secret in a registration with {@code nonce}: the same on
     * both sides, each using its own private key and the other's public key.
     *
     * @throws GeneralSecurityException when {@code peerPublic} is not a valid P-256 key
     */
    public static byte[] sealingKey(PrivateKey mine, byte[] peerPublic, String appId, byte[] nonce)
            throws GeneralSecurityException {
        KeyAgreement ka = KeyAgreement.getInstance("ECDH");
        ka.init(mine);
        ka.doPhase(publicKey(peerPublic), true);
        return Hmac.sha256(ka.generateSecret(), LABEL, Hmac.utf8(appId), nonce);
    }
}
