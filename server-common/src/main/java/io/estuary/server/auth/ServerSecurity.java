package io.estuary.server.auth;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.network.auth.Credentials;
import io.estuary.network.auth.SecretLookup;
import io.estuary.network.auth.ServerAuth;

/**
 * What a server (master or worker) reads from its configuration to authenticate: whether authentication is on
 * ({@code estuary.auth.enabled}), how each of its ports authenticates ({@code estuary.auth.mode}), and the credentials it proves to other servers.
 * Stateless.
 */
public final class ServerSecurity {
    private ServerSecurity() {}

    public static boolean enabled(EstuaryConf conf) {
        return conf.get(AuthConfig.ENABLED);
    }

    /** Authentication on and enforced (not the permissive mode of a rolling upgrade). */
    public static boolean enforced(EstuaryConf conf) {
        return enabled(conf) && !"permissive".equals(conf.get(AuthConfig.MODE));
    }

    /**
     * How a port authenticates: off when {@code clusterSecret} is null (authentication off); else enforce (admitting
     * anonymous peers only when {@code admitsAnonymous}) or permissive, as {@code estuary.auth.mode} says.
     */
    public static ServerAuth serverAuth(
            EstuaryConf conf, byte[] clusterSecret, SecretLookup lookup, boolean admitsAnonymous) {
        if (clusterSecret == null) return ServerAuth.off();
        return enforced(conf) ? ServerAuth.enforce(lookup, admitsAnonymous) : ServerAuth.permissive(lookup);
    }

    /** What a server proves to other servers: the cluster secret, or nothing when authentication is off. */
    public static Credentials clusterCredentials(byte[] clusterSecret) {
        return clusterSecret == null ? Credentials.NONE : Credentials.cluster(clusterSecret);
    }
}
