package io.estuary.common.config;

import static io.estuary.common.config.ConfigEntry.Scope.CLIENT;
import static io.estuary.common.config.ConfigEntry.Scope.SERVER;

/**
 * Authentication and authorization (docs/security.md). Read by servers and by clients (a client with authentication
 * on gives its application a secret and proves it on every connection), so their scope is both unless a declaration
 * says otherwise.
 */
public final class AuthConfig {
    private AuthConfig() {}

    public static final ConfigEntry<Boolean> ENABLED = ConfigEntry.builder("estuary.auth.enabled", ConfigType.BOOLEAN)
            .defaultValue("true")
            .doc("Authenticate every connection on every port and authorize every request against the application it "
                    + "names (on by default). Servers then need estuary.auth.cluster.secretFile and refuse to start "
                    + "without it (`bin/estuary secret generate > FILE`); each application gets its own secret from its "
                    + "lifecycle manager. false: no authentication nor authorization.")
            .build();

    public static final ConfigEntry<String> MODE = ConfigEntry.builder("estuary.auth.mode", ConfigType.STRING)
            .defaultValue("enforce")
            .scope(SERVER)
            .check(ConfigType.oneOf("enforce", "permissive"))
            .doc("enforce: a connection that proves no identity is refused (except where a port admits it, such as "
                    + "registering an application at the master), and so is a request for another application. "
                    + "permissive: for a rolling upgrade from a release without authentication; peers that can "
                    + "authenticate do, the others are accepted and each such request is logged (WARN, rate-limited) "
                    + "and counted. A peer that presents wrong credentials is refused in both modes.")
            .build();

    public static final ConfigEntry<String> CLUSTER_SECRET_FILE = ConfigEntry.builder(
                    "estuary.auth.cluster.secretFile", ConfigType.STRING)
            .defaultValue("")
            .scope(SERVER)
            .doc("File holding the secret that masters and workers share (make one with `bin/estuary secret generate "
                    + "> FILE`). It must be readable by its owner only: a group- or world-readable file is refused at "
                    + "start.")
            .build();

    public static final ConfigEntry<Integer> WORKER_SECRET_CACHE_SIZE = ConfigEntry.builder(
                    "estuary.auth.worker.secretCacheSize", ConfigType.INT)
            .defaultValue("10000")
            .scope(SERVER)
            .check(n -> n >= 1 ? null : "must be at least 1")
            .doc("How many applications' secrets a worker keeps (least recently used out first). A secret not kept "
                    + "is asked of the master when the application next connects; the master's heartbeat answers drop "
                    + "those of applications that ended or expired.")
            .build();

    public static final ConfigEntry<String> APPLICATION_SECRET = ConfigEntry.builder(
                    "estuary.auth.application.secret", ConfigType.STRING)
            .defaultValue("")
            .scope(CLIENT)
            .doc("The application's secret (base64, at least 16 bytes), which its driver, executors and tasks prove on "
                    + "every connection. Set by the engine integration, never by hand: empty on a driver, the "
                    + "lifecycle manager makes one and registers it with the master (no secret ever crosses the wire "
                    + "in clear); executors and tasks get it from the engine (docs/security.md).")
            .build();

    /**
     * The application secret {@code conf} holds, decoded; null when none is set. Checked here, not by a type check,
     * because a refused value is quoted in the type check's message and this one is a secret.
     *
     * @throws ConfigException when it is not base64 of at least 16 bytes (the message never quotes it)
     */
    public static byte[] applicationSecret(EstuaryConf conf) {
        String s = conf.get(APPLICATION_SECRET).trim();
        if (s.isEmpty()) return null;
        byte[] secret;
        try {
            secret = java.util.Base64.getDecoder().decode(s);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(APPLICATION_SECRET.key() + " is not base64");
        }
        if (secret.length < 16) {
            throw new ConfigException(APPLICATION_SECRET.key() + " holds " + secret.length + " bytes; it needs 16");
        }
        return secret;
    }

    // ---- Admin HTTP (masters' and workers' HTTP ports; bin/estuary sends the token) ----

    public static final ConfigEntry<String> ADMIN_TOKEN_FILE = ConfigEntry.builder(
                    "estuary.auth.admin.tokenFile", ConfigType.STRING)
            .defaultValue("")
            .doc("File holding the bearer token the admin HTTP API of masters and workers asks for (with "
                    + "estuary.auth.enabled=true): one line of at least 16 printable characters, no spaces. It must be "
                    + "readable by its owner only, as the cluster secret. Unset: the token is derived from the cluster "
                    + "secret (hex of HMAC-SHA256 keyed with the bytes of estuary.auth.cluster.secretFile, over "
                    + "\"estuary admin token v1\"), so bin/estuary run with the servers' configuration finds it. "
                    + "bin/estuary reads this key too (or --token-file, or $ESTUARY_ADMIN_TOKEN_FILE).")
            .build();

    public static final ConfigEntry<Boolean> ADMIN_PROTECT_READS = ConfigEntry.builder(
                    "estuary.auth.admin.protectReads", ConfigType.BOOLEAN)
            .defaultValue("true")
            .scope(SERVER)
            .doc("With estuary.auth.enabled=true, reads of the admin HTTP API (GET /api/...: workers, applications, "
                    + "shuffles, status) need the admin token too. Changes (every POST) always need it.")
            .build();

    public static final ConfigEntry<Boolean> ADMIN_OPEN_METRICS = ConfigEntry.builder(
                    "estuary.auth.admin.openMetrics", ConfigType.BOOLEAN)
            .defaultValue("true")
            .scope(SERVER)
            .doc("With estuary.auth.enabled=true, GET /metrics and GET /health stay open (no token) for "
                    + "Prometheus scrapers and liveness probes. false: they need the admin token too.")
            .build();
}
