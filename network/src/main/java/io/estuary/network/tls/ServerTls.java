package io.estuary.network.tls;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import io.estuary.common.time.Clock;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.SslContext;
import java.io.File;

/**
 * TLS for the servers of one port group: presents the group's certificate (reloaded when its files change) and, with
 * {@code clientAuth}, requires a client certificate from the group's trust bundle. {@link #addTo} puts the TLS
 * handler first in a new connection's pipeline, so everything after it (the Estuary handshake included) is
 * encrypted. Thread-safe.
 */
public final class ServerTls {
    private final TlsConfig.Group group;
    private final TlsFiles files;
    private final ReloadingSslContext context;

    private ServerTls(TlsConfig.Group group, TlsFiles files, ReloadingSslContext context) {
        this.group = group;
        this.files = files;
        this.context = context;
    }

    /**
     * The group's server TLS, or null when {@code estuary.tls.<group>.enabled} is false. Reads the files now: a
     * missing or unusable certificate or key fails here, at start, naming the file and key.
     */
    public static ServerTls fromConf(EstuaryConf conf, TlsConfig.Group group) throws TlsSetupException {
        return fromConf(conf, group, Clock.system());
    }

    /** As above, timing reloads with {@code clock}. */
    public static ServerTls fromConf(EstuaryConf conf, TlsConfig.Group group, Clock clock) throws TlsSetupException {
        if (!conf.get(group.enabled)) return null;
        TlsFiles files = TlsFiles.configured(conf, group);
        return new ServerTls(
                group,
                files,
                new ReloadingSslContext(
                        "server", files, SslContexts::server, clock, conf.get(TlsConfig.RELOAD_INTERVAL)));
    }

    public TlsConfig.Group group() {
        return group;
    }

    /**
     * The group's configured PEM files (certificate chain, PKCS#8 key, trust bundle; trust may be null), for
     * transports that load TLS from files themselves and cannot take a Netty context (the masters' Raft runs on its
     * own relocated Netty). Such a transport does not reload them.
     */
    public File certFile() {
        return files.certFile;
    }

    public File keyFile() {
        return files.keyFile;
    }

    public File trustFile() {
        return files.trustFile;
    }

    /** Whether the group requires client certificates (mutual TLS). */
    public boolean clientAuth() {
        return files.clientAuth;
    }

    /** The protocols every Estuary TLS port allows (TLS 1.3 and 1.2), for transports that set their engines' own. */
    public static String[] protocols() {
        return SslContexts.PROTOCOLS.clone();
    }

    /**
     * The context a new connection should use (the newest usable files). For servers that build their own
     * transport (the masters' Raft): call it per connection, or per server start if the transport takes one context.
     */
    public SslContext sslContext() {
        return context.current();
    }

    /** Puts TLS first in a new server connection's pipeline, after a detector that answers a plain client's hello
     * with a TLS alert, and with a guard that logs failed handshakes. */
    public void addTo(ChannelPipeline pipeline, String serverName) {
        pipeline.addFirst("tlsGuard", new ServerTlsGuard(serverName, group, HandshakeWarnLimit.PER_PROCESS));
        pipeline.addFirst("tls", sslContext().newHandler(pipeline.channel().alloc()));
        pipeline.addFirst("tlsDetect", new PlainClientDetector(serverName, group));
    }
}
