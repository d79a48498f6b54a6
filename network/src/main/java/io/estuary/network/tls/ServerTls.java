package io.estuary.network.tls;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import io.estuary.common.time.Clock;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.SslContext;

/**
 * TLS for the servers of one port group: presents the group's certificate (reloaded when its files change) and, with
 * {@code clientAuth}, requires a client certificate from the group's trust bundle. {@link #addTo} puts the TLS
 * handler first in a new connection's pipeline, so everything after it (the Estuary handshake included) is
 * encrypted. Thread-safe.
 */
public final class ServerTls {
    private final TlsConfig.Group group;
    private final ReloadingSslContext context;

    private ServerTls(TlsConfig.Group group, ReloadingSslContext context) {
        this.group = group;
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
                new ReloadingSslContext(
                        "server", files, SslContexts::server, clock, conf.get(TlsConfig.RELOAD_INTERVAL)));
    }

    public TlsConfig.Group group() {
        return group;
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
        pipeline.addFirst("tlsGuard", new ServerTlsGuard(serverName, group));
        pipeline.addFirst("tls", sslContext().newHandler(pipeline.channel().alloc()));
        pipeline.addFirst("tlsDetect", new PlainClientDetector(serverName, group));
    }
}
