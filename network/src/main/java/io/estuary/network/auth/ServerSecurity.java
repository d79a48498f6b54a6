package io.estuary.network.auth;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.ConfigException;
import io.estuary.common.config.EstuaryConf;

/**
 * What a server (master or worker) reads from its configuration to authenticate: whether authentication is on
 * ({@code estuary.auth.enabled}), the cluster secret (which a server with authentication on cannot start without),
 * how each of its ports authenticates ({@code estuary.auth.mode}), and the credentials it proves to other servers.
 * Stateless.
 */
public final class ServerSecurity {
    private ServerSecurity() {}

    public static boolean enabled(EstuaryConf conf) {
        return conf.get(AuthConfig.ENABLED);
    }

    /**
     * The cluster secret, or null when authentication is off.
     *
     * @throws ConfigException when authentication is on and the secret file is not set, not readable, readable by
     *     others than its owner, or too short (the message says how to make one)
     */
    public static byte[] clusterSecret(EstuaryConf conf) {
        if (!enabled(conf)) return null;
        return loadClusterSecret(conf.get(AuthConfig.CLUSTER_SECRET_FILE));
    }

    // Until auth-core's ClusterSecret is merged: the same contract (owner-only file, >= 32 bytes, base64 or raw).
    private static byte[] loadClusterSecret(String file) {
        String how = "; make one with `bin/estuary secret generate > FILE` and `chmod 600 FILE`";
        if (file.isEmpty()) {
            throw new ConfigException("authentication is on (" + AuthConfig.ENABLED.key() + ") but "
                    + AuthConfig.CLUSTER_SECRET_FILE.key() + " is not set" + how);
        }
        java.nio.file.Path path = java.nio.file.Paths.get(file);
        byte[] bytes;
        try {
            java.util.Set<java.nio.file.attribute.PosixFilePermission> perms =
                    java.nio.file.Files.getPosixFilePermissions(path);
            for (java.nio.file.attribute.PosixFilePermission p : perms) {
                if (p.name().startsWith("GROUP_") || p.name().startsWith("OTHERS_")) {
                    throw new ConfigException("the cluster secret file " + file + " is readable by others than its "
                            + "owner (" + java.nio.file.attribute.PosixFilePermissions.toString(perms)
                            + "); run `chmod 600 " + file + "`");
                }
            }
            bytes = java.nio.file.Files.readAllBytes(path);
        } catch (java.io.IOException e) {
            throw new ConfigException("cannot read the cluster secret file " + file + ": " + e + how);
        }
        byte[] secret = bytes;
        try {
            byte[] decoded = java.util.Base64.getDecoder()
                    .decode(new String(bytes, java.nio.charset.StandardCharsets.US_ASCII).trim());
            if (decoded.length >= 32) secret = decoded;
        } catch (IllegalArgumentException e) {
            // raw bytes
        }
        if (secret.length < 32) {
            throw new ConfigException("the cluster secret in " + file + " has " + secret.length + " bytes; it needs "
                    + "at least 32" + how);
        }
        return secret;
    }

    /**
     * How a port authenticates: off when {@code clusterSecret} is null (authentication off); else enforce (admitting
     * anonymous peers only when {@code admitsAnonymous}) or permissive, as {@code estuary.auth.mode} says.
     */
    public static ServerAuth serverAuth(
            EstuaryConf conf, byte[] clusterSecret, SecretLookup lookup, boolean admitsAnonymous) {
        if (clusterSecret == null) return ServerAuth.off();
        return "permissive".equals(conf.get(AuthConfig.MODE))
                ? ServerAuth.permissive(lookup)
                : ServerAuth.enforce(lookup, admitsAnonymous);
    }

    /** What a server proves to other servers: the cluster secret, or nothing when authentication is off. */
    public static Credentials clusterCredentials(byte[] clusterSecret) {
        return clusterSecret == null ? Credentials.NONE : Credentials.cluster(clusterSecret);
    }
}
