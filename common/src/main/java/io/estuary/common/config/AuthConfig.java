package io.estuary.common.config;

import static io.estuary.common.config.ConfigEntry.Scope.SERVER;

/**
 * Authentication and authorization (docs/security.md). Read by servers and by clients (a client with authentication
 * on gives its application a secret and proves it on every connection), so their scope is both unless a declaration
 * says otherwise.
 */
public final class AuthConfig {
    private AuthConfig() {}

    public static final ConfigEntry<Boolean> ENABLED = ConfigEntry.builder("estuary.auth.enabled", ConfigType.BOOLEAN)
            .defaultValue("false")
            .doc("Authenticate every connection on every port and authorize every request against the application it "
                    + "names. Servers then need estuary.auth.cluster.secretFile; each application gets its own secret "
                    + "from its lifecycle manager.")
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
