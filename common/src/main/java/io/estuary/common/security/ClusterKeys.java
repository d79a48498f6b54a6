package io.estuary.common.security;

/**
 * Keys every server derives from the cluster secret, so that one secret file serves several purposes without any
 * of them revealing it or another: sealing application secrets in the masters' log and for workers, and the admin
 * token. Stateless, thread-safe.
 */
public final class ClusterKeys {
    private ClusterKeys() {}

    /** The 32-byte key that seals application secrets in the Raft log and in answers to workers. */
    public static byte[] sealingKey(byte[] clusterSecret) {
        return Hmac.sha256(clusterSecret, Hmac.utf8("estuary application secret sealing v1"));
    }
}
