package io.estuary.network.tls;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import io.estuary.common.time.Clock;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

/**
 * A port group's client TLS as bare JDK {@link SSLEngine}s, for transports that run on another Netty than Estuary's
 * (the masters' Raft runs on Ratis' relocated one, whose {@code SslHandler} takes a javax engine but not an
 * {@code io.netty} context). The same files, provider, protocols (TLS 1.3 and 1.2) and cipher suites as
 * {@link ClientTls}: trusts the group's bundle, presents the group's certificate when it has one (mutual TLS), and
 * checks that the server's certificate names the host connected to unless {@code estuary.tls.verifyHostname} is
 * off. Each new engine comes from the newest usable files (checked at most once per {@code estuary.tls.reloadInterval}).
 * Thread-safe.
 */
public final class JdkClientTls {
    private final ClientTls tls;
    private final boolean verifyHostname;

    private JdkClientTls(ClientTls tls, boolean verifyHostname) {
        this.tls = tls;
        this.verifyHostname = verifyHostname;
    }

    /** The group's client TLS, or null when {@code estuary.tls.<group>.enabled} is false. Reads the files now. */
    public static JdkClientTls fromConf(EstuaryConf conf, TlsConfig.Group group, Clock clock) throws TlsSetupException {
        // The JDK's engine whatever estuary.tls.provider says: these transports take javax engines only.
        ClientTls tls = ClientTls.fromConf(conf.copy().set(TlsConfig.PROVIDER, "jdk"), group, clock);
        return tls == null ? null : new JdkClientTls(tls, conf.get(TlsConfig.VERIFY_HOSTNAME));
    }

    public TlsConfig.Group group() {
        return tls.group();
    }

    /**
     * A new client engine for a connection to {@code host:port}: client mode, TLS 1.3 and 1.2 only, and with
     * hostname verification the server's certificate must name {@code host} (DNS or IP SAN).
     */
    public SSLEngine newEngine(String host, int port) {
        SslContext current = tls.sslContext();
        // Built with the JDK provider (SslContexts), so always a JdkSslContext.
        SSLEngine engine = ((JdkSslContext) current).context().createSSLEngine(host, port);
        engine.setUseClientMode(true);
        SSLParameters p = engine.getSSLParameters();
        p.setProtocols(SslContexts.PROTOCOLS.clone());
        p.setCipherSuites(current.cipherSuites().toArray(new String[0]));
        if (verifyHostname) p.setEndpointIdentificationAlgorithm("HTTPS");
        engine.setSSLParameters(p);
        return engine;
    }
}
