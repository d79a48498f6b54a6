package io.estuary.network.auth;

import java.util.Arrays;

/**
 * What a client proves itself with in the connection handshake: an identity and its secret, or nothing
 * ({@link #NONE}, an anonymous connection). The secret never leaves this object except into an HMAC: it is not
 * printed by {@link #toString()} and never sent. Immutable (the secret is copied in and out).
 */
public final class Credentials {
    /** No identity: the connection is anonymous. */
    public static final Credentials NONE = new Credentials(null, null);

    private final Identity identity;
    private final byte[] secret;

    private Credentials(Identity identity, byte[] secret) {
        this.identity = identity;
        this.secret = secret;
    }

    /** A master or worker, with the cluster secret. */
    public static Credentials cluster(byte[] clusterSecret) {
        return new Credentials(Identity.CLUSTER, checked(clusterSecret));
    }

    /** An application (its driver, executors or tasks), with the application's secret. */
    public static Credentials application(String appId, byte[] appSecret) {
        return new Credentials(Identity.application(appId), checked(appSecret));
    }

    private static byte[] checked(byte[] secret) {
        if (secret == null || secret.length < 16) {
            throw new IllegalArgumentException("a secret must have at least 16 bytes");
        }
        return secret.clone();
    }

    /** The identity claimed, or null for {@link #NONE}. */
    public Identity identity() {
        return identity;
    }

    public boolean isNone() {
        return identity == null;
    }

    /** A copy of the secret; null for {@link #NONE}. */
    public byte[] secret() {
        return secret == null ? null : secret.clone();
    }

    @Override
    public String toString() {
        return identity == null ? "no credentials" : "credentials of " + identity.name();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Credentials)) return false;
        Credentials other = (Credentials) o;
        return java.util.Objects.equals(identity, other.identity) && Arrays.equals(secret, other.secret);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hashCode(identity);
    }
}
