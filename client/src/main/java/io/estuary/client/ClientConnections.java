package io.estuary.client;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.ConfigException;
import io.estuary.common.config.EstuaryConf;
import io.estuary.network.auth.Credentials;
import io.estuary.network.client.TransportClientFactory;
import java.io.Closeable;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The connections of an executor's or task's {@link ShuffleClient}, to workers and to the driver. With
 * authentication off, one factory serves every application, proving nothing. With it on, each application's
 * connections prove {@code Credentials.application(appId, secret)}, the secret being the process's
 * {@code estuary.auth.application.secret} (the engine sets it; a process serves one application): one factory per
 * application, made on first use. Thread-safe.
 */
final class ClientConnections implements Closeable {
    private final EstuaryConf conf;
    private final String name;
    /** Null with authentication off. */
    private final byte[] secret;

    private final TransportClientFactory unauthenticated;
    private final Map<String, TransportClientFactory> byApplication = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * @throws ConfigException when authentication is on and the process has no application secret (or a bad one)
     */
    ClientConnections(EstuaryConf conf, String name) {
        this.conf = conf;
        this.name = name;
        if (conf.get(AuthConfig.ENABLED)) {
            this.secret = AuthConfig.applicationSecret(conf);
            if (secret == null) {
                throw new ConfigException("authentication is on (" + AuthConfig.ENABLED.key() + "=true) but this "
                        + "process has no application secret (" + AuthConfig.APPLICATION_SECRET.key() + "): the "
                        + "engine integration gives executors and tasks their application's secret (see "
                        + "docs/security.md)");
            }
            this.unauthenticated = null;
        } else {
            this.secret = null;
            this.unauthenticated = new TransportClientFactory(conf, name);
        }
    }

    /** The connections that act for application {@code appId}. */
    TransportClientFactory of(String appId) {
        if (secret == null) return unauthenticated;
        TransportClientFactory f = byApplication.get(appId);
        if (f != null) return f;
        synchronized (this) {
            if (closed) throw new IllegalStateException("the shuffle client is closed");
            return byApplication.computeIfAbsent(
                    appId, a -> new TransportClientFactory(conf, name, Credentials.application(a, secret)));
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (unauthenticated != null) unauthenticated.close();
        for (TransportClientFactory f : byApplication.values()) f.close();
        byApplication.clear();
    }
}
