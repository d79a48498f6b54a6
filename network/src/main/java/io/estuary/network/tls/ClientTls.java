package io.estuary.network.tls;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import io.estuary.common.time.Clock;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

/**
 * TLS for the connections a process opens to one port group's servers: trusts the group's bundle, checks that the
 * server's certificate names the host connected to ({@code estuary.tls.verifyHostname}) and presents the group's
 * certificate when it has one (mutual TLS). Thread-safe.
 */
public final class ClientTls {
    private final TlsConfig.Group group;
    private final ReloadingSslContext context;
    private final boolean verifyHostname;

    private ClientTls(TlsConfig.Group group, ReloadingSslContext context, boolean verifyHostname) {
        this.group = group;
        this.context = context;
        this.verifyHostname = verifyHostname;
    }

    /** The group's client TLS, or null when {@code estuary.tls.<group>.enabled} is false. Reads the files now. */
    public static ClientTls fromConf(EstuaryConf conf, TlsConfig.Group group) throws TlsSetupException {
        return fromConf(conf, group, Clock.system());
    }

    /** As above, timing reloads with {@code clock}. */
    public static ClientTls fromConf(EstuaryConf conf, TlsConfig.Group group, Clock clock) throws TlsSetupException {
        if (!conf.get(group.enabled)) return null;
        TlsFiles files = TlsFiles.configured(conf, group);
        return new ClientTls(
                group,
                new ReloadingSslContext(
                        "client", files, SslContexts::client, clock, conf.get(TlsConfig.RELOAD_INTERVAL)),
                conf.get(TlsConfig.VERIFY_HOSTNAME));
    }

    public TlsConfig.Group group() {
        return group;
    }

    /** The context a new connection should use (for transports built elsewhere, such as the masters' Raft). */
    public SslContext sslContext() {
        return context.current();
    }

    /**
     * Puts TLS first in a new connection's pipeline to {@code host:port} and returns the guard that keeps why the
     * TLS handshake failed, if it does ({@link ClientTlsGuard#failure()}), in words naming the cause.
     */
    public ClientTlsGuard addTo(ChannelPipeline pipeline, String host, int port) {
        SslHandler ssl = sslContext().newHandler(pipeline.channel().alloc(), host, port);
        if (verifyHostname) {
            SSLEngine engine = ssl.engine();
            SSLParameters p = engine.getSSLParameters();
            p.setEndpointIdentificationAlgorithm("HTTPS"); // the server's SANs must name host
            engine.setSSLParameters(p);
        }
        ClientTlsGuard guard = new ClientTlsGuard(host + ":" + port, group);
        pipeline.addFirst("tlsGuard", guard);
        pipeline.addFirst("tls", ssl);
        return guard;
    }
}
