package io.estuary.common.config;

/**
 * TLS, per port group (docs/security.md). Each group has the same five keys, {@code estuary.tls.<group>.*}: servers
 * read the certificate and key they present (and the trust bundle when they require client certificates), clients
 * read the trust bundle (and the certificate and key when the servers require them). Files are PEM: a certificate
 * chain, a PKCS#8 private key (as cert-manager writes them) and a bundle of trusted CA certificates. Read by servers
 * and clients alike.
 */
public final class TlsConfig {
    private TlsConfig() {}

    /** A port group: the ports and connections whose TLS one set of keys configures. */
    public enum Group {
        /** Master RPC (workers, drivers), worker control, worker-to-master, worker-to-worker replication. */
        INTERNAL("internal", INTERNAL_ENABLED, INTERNAL_CERT, INTERNAL_KEY, INTERNAL_TRUST, INTERNAL_CLIENT_AUTH),
        /** Workers' push and fetch ports (executors, tasks). */
        DATA("data", DATA_ENABLED, DATA_CERT, DATA_KEY, DATA_TRUST, DATA_CLIENT_AUTH),
        /** The driver's (lifecycle manager's) port and its executors' connections to it. */
        APPLICATION("application", APP_ENABLED, APP_CERT, APP_KEY, APP_TRUST, APP_CLIENT_AUTH),
        /** Masters' and workers' admin HTTP ports (HTTPS): bin/estuary, scrapers, probes. */
        ADMIN("admin", ADMIN_ENABLED, ADMIN_CERT, ADMIN_KEY, ADMIN_TRUST, ADMIN_CLIENT_AUTH);

        public final String name;
        public final ConfigEntry<Boolean> enabled;
        public final ConfigEntry<String> certFile;
        public final ConfigEntry<String> keyFile;
        public final ConfigEntry<String> trustFile;
        public final ConfigEntry<Boolean> clientAuth;

        Group(
                String name,
                ConfigEntry<Boolean> enabled,
                ConfigEntry<String> certFile,
                ConfigEntry<String> keyFile,
                ConfigEntry<String> trustFile,
                ConfigEntry<Boolean> clientAuth) {
            this.name = name;
            this.enabled = enabled;
            this.certFile = certFile;
            this.keyFile = keyFile;
            this.trustFile = trustFile;
            this.clientAuth = clientAuth;
        }
    }

    public static final ConfigEntry<Boolean> INTERNAL_ENABLED = enabled(
            "internal",
            "the masters' RPC port, the workers' control port, workers' connections to the masters and to each other "
                    + "(replication)");
    public static final ConfigEntry<String> INTERNAL_CERT = certFile("internal");
    public static final ConfigEntry<String> INTERNAL_KEY = keyFile("internal");
    public static final ConfigEntry<String> INTERNAL_TRUST = trustFile("internal");
    public static final ConfigEntry<Boolean> INTERNAL_CLIENT_AUTH = clientAuth("internal");

    public static final ConfigEntry<Boolean> DATA_ENABLED =
            enabled("data", "the workers' push and fetch ports and the executors' and tasks' connections to them");
    public static final ConfigEntry<String> DATA_CERT = certFile("data");
    public static final ConfigEntry<String> DATA_KEY = keyFile("data");
    public static final ConfigEntry<String> DATA_TRUST = trustFile("data");
    public static final ConfigEntry<Boolean> DATA_CLIENT_AUTH = clientAuth("data");

    public static final ConfigEntry<Boolean> APP_ENABLED = enabled(
            "application",
            "the port of an application's driver (Spark driver, MapReduce job client or AM) and its executors' and "
                    + "tasks' connections to it");
    public static final ConfigEntry<String> APP_CERT = certFile("application");
    public static final ConfigEntry<String> APP_KEY = keyFile("application");
    public static final ConfigEntry<String> APP_TRUST = trustFile("application");
    public static final ConfigEntry<Boolean> APP_CLIENT_AUTH = clientAuth("application");

    public static final ConfigEntry<Boolean> ADMIN_ENABLED = enabled(
            "admin",
            "the masters' and workers' admin HTTP ports (HTTPS: the REST API, /metrics, /health) and bin/estuary's "
                    + "calls to them; scrapers and probes then use https");
    public static final ConfigEntry<String> ADMIN_CERT = certFile("admin");
    public static final ConfigEntry<String> ADMIN_KEY = keyFile("admin");
    public static final ConfigEntry<String> ADMIN_TRUST = trustFile("admin");
    public static final ConfigEntry<Boolean> ADMIN_CLIENT_AUTH = clientAuth("admin");

    public static final ConfigEntry<Long> RELOAD_INTERVAL = ConfigEntry.builder(
                    "estuary.tls.reloadInterval", ConfigType.DURATION_MS)
            .defaultValue("60s")
            .check(ConfigType.positive())
            .doc("How often, at most, a new connection checks whether the certificate, key or trust files changed "
                    + "(cert-manager renews them in place). New connections then use the new files; open ones "
                    + "continue. A change that cannot be read is logged (WARN) and the previous files stay in use.")
            .build();

    public static final ConfigEntry<Boolean> VERIFY_HOSTNAME = ConfigEntry.builder(
                    "estuary.tls.verifyHostname", ConfigType.BOOLEAN)
            .defaultValue("true")
            .doc("Clients check that the server's certificate names the host they connected to (a DNS or IP "
                    + "subject alternative name). Turn off only for test setups whose certificates name no host.")
            .build();

    public static final ConfigEntry<String> PROVIDER = ConfigEntry.builder("estuary.tls.provider", ConfigType.STRING)
            .defaultValue("auto")
            .check(ConfigType.oneOf("auto", "openssl", "jdk"))
            .doc("Which TLS implementation encrypts: openssl (BoringSSL through netty-tcnative, which the servers' "
                    + "class path carries; several times less CPU per byte than the JDK's), jdk (the JVM's own), or "
                    + "auto: openssl where it loads, else jdk. Client jars carry no native library, so clients use "
                    + "the JDK's; either end works with the other. openssl where it cannot load refuses to start.")
            .build();

    private static ConfigEntry<Boolean> enabled(String group, String covers) {
        return ConfigEntry.builder("estuary.tls." + group + ".enabled", ConfigType.BOOLEAN)
                .defaultValue("false")
                .doc("TLS (1.2 or 1.3) on " + covers + ". Servers and clients must agree: a plain client on a TLS "
                        + "port, or the reverse, is refused at connect with a message saying so.")
                .build();
    }

    private static ConfigEntry<String> certFile(String group) {
        return ConfigEntry.builder("estuary.tls." + group + ".certFile", ConfigType.STRING)
                .defaultValue("")
                .doc("PEM certificate chain the " + group + " servers present (and clients, with " + "estuary.tls."
                        + group + ".clientAuth). Needed by servers when TLS is on.")
                .build();
    }

    private static ConfigEntry<String> keyFile(String group) {
        return ConfigEntry.builder("estuary.tls." + group + ".keyFile", ConfigType.STRING)
                .defaultValue("")
                .doc("PEM PKCS#8 private key (unencrypted) of estuary.tls." + group + ".certFile.")
                .build();
    }

    private static ConfigEntry<String> trustFile(String group) {
        return ConfigEntry.builder("estuary.tls." + group + ".trustFile", ConfigType.STRING)
                .defaultValue("")
                .doc("PEM bundle of the CA certificates that clients trust for the " + group + " servers (and "
                        + "servers for client certificates, with estuary.tls." + group + ".clientAuth). Empty: "
                        + "the JVM's default trust store.")
                .build();
    }

    private static ConfigEntry<Boolean> clientAuth(String group) {
        return ConfigEntry.builder("estuary.tls." + group + ".clientAuth", ConfigType.BOOLEAN)
                .defaultValue("false")
                .doc("Mutual TLS: the " + group + " servers require a client certificate signed by a CA in "
                        + "estuary.tls." + group + ".trustFile, and clients present estuary.tls." + group
                        + ".certFile.")
                .build();
    }
}
