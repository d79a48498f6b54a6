package io.estuary.network.tls;

import io.estuary.common.config.TlsConfig;
import io.estuary.common.time.Clock;
import io.netty.handler.ssl.SslContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An {@link SslContext} built from a port group's PEM files and rebuilt when they change. {@link #current()} checks
 * the files at most once per reload interval (it is called for each new connection, so new connections pick up a
 * renewed certificate; open ones keep the context they started with). Files that changed but cannot be used (half
 * written, a key that does not match) are logged once per change and the previous context stays in use. Thread-safe.
 */
final class ReloadingSslContext {
    private static final Logger LOG = LoggerFactory.getLogger(ReloadingSslContext.class);

    /** Builds a context from files already read. */
    interface Builder {
        SslContext build(TlsFiles files) throws TlsSetupException;
    }

    private final String side;
    private final Builder builder;
    private final Clock clock;
    private final long intervalMs;
    private volatile SslContext context;
    private TlsFiles loaded; // guarded by this
    private String lastError; // why the last changed files could not be used; guarded by this
    private long checkedAt; // guarded by this

    /** Reads and builds now: a group whose files cannot be used fails here, at start, naming the file. */
    ReloadingSslContext(String side, TlsFiles files, Builder builder, Clock clock, long intervalMs)
            throws TlsSetupException {
        this.side = side;
        this.builder = builder;
        this.clock = clock;
        this.intervalMs = intervalMs;
        this.loaded = files.read();
        this.context = builder.build(loaded);
        this.checkedAt = clock.millis();
        String provider = context instanceof io.netty.handler.ssl.JdkSslContext ? "the JDK's" : "OpenSSL";
        if ("server".equals(side)) {
            LOG.info("TLS on the {} group with {} engine ({})", files.group.name, provider, TlsConfig.PROVIDER.key());
        } else {
            LOG.debug("TLS to the {} group with {} engine", files.group.name, provider);
        }
    }

    /** The context for a new connection, rebuilt first if the interval passed and the files changed. */
    SslContext current() {
        long now = clock.millis();
        synchronized (this) {
            if (now - checkedAt >= intervalMs) {
                checkedAt = now;
                reloadIfChanged();
            }
        }
        return context;
    }

    private void reloadIfChanged() {
        try {
            TlsFiles now = loaded.read();
            if (!now.differsFrom(loaded)) return;
            context = builder.build(now);
            loaded = now;
            lastError = null;
            LOG.info("TLS files of the {} group ({} side) changed: new connections use them", loaded.group.name, side);
        } catch (TlsSetupException e) {
            if (!e.getMessage().equals(lastError)) { // once per distinct problem, not once per interval
                LOG.warn(
                        "TLS files of the {} group ({} side) changed but cannot be used; new connections keep the "
                                + "previous certificate: {}",
                        loaded.group.name,
                        side,
                        e.getMessage());
            }
            lastError = e.getMessage();
        }
    }
}
