package io.estuary.server.tls;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import io.estuary.common.time.Clock;
import io.estuary.network.tls.ServerTls;
import io.estuary.network.tls.TlsSetupException;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContext;
import java.security.KeyManagementException;
import java.security.SecureRandom;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLContextSpi;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocketFactory;
import javax.net.ssl.SSLSessionContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManager;

/**
 * A port group's server TLS for servers built on the JDK's own {@link SSLEngine} rather than Netty (the admin HTTPS
 * server): the same files, provider, protocols (TLS 1.3 and 1.2) and cipher suites as {@link ServerTls}, as a
 * {@link javax.net.ssl.SSLContext} and the {@link SSLParameters} each new connection's engine must get.
 *
 * <p>The JDK's HTTPS server takes one SSLContext when it starts and creates every connection's engine from it, so
 * {@link #sslContext()} is a context whose engines come from the newest usable files: each
 * {@code createSSLEngine} asks the reloading context (files checked at most once per
 * {@code estuary.tls.reloadInterval}); open connections keep their engine. Engines it creates are bare (the JDK's
 * defaults): apply {@link #sslParameters()} to each. Thread-safe.
 */
public final class JdkServerTls {
    private final ServerTls tls;
    private final SSLContext context;

    private JdkServerTls(ServerTls tls) {
        this.tls = tls;
        this.context = new Delegating(tls);
    }

    /**
     * The group's server TLS, or null when {@code estuary.tls.<group>.enabled} is false. Reads the files now: a
     * missing or unusable certificate or key fails here, at start, naming the file and key.
     */
    public static JdkServerTls fromConf(EstuaryConf conf, TlsConfig.Group group, Clock clock) throws TlsSetupException {
        // The JDK's engine whatever estuary.tls.provider says: these transports take javax engines only.
        ServerTls tls = ServerTls.fromConf(conf.copy().set(TlsConfig.PROVIDER, "jdk"), group, clock);
        return tls == null ? null : new JdkServerTls(tls);
    }

    public TlsConfig.Group group() {
        return tls.group();
    }

    /** The context to give the server once: its engines follow the files (see the class comment). */
    public SSLContext sslContext() {
        return context;
    }

    /**
     * What every new connection's engine must be set to: TLS 1.3 and 1.2 only, the data ports' cipher suites, and
     * with {@code clientAuth} a client certificate required (checked against the group's trust bundle).
     */
    public SSLParameters sslParameters() {
        SslContext current = tls.sslContext();
        SSLParameters p = new SSLParameters();
        p.setProtocols(ServerTls.protocols());
        p.setCipherSuites(current.cipherSuites().toArray(new String[0]));
        p.setNeedClientAuth(tls.clientAuth());
        return p;
    }

    /** The javax context inside the current Netty one (built with the JDK provider, so always a JdkSslContext). */
    private static SSLContext current(ServerTls tls) {
        return ((JdkSslContext) tls.sslContext()).context();
    }

    private static final class Delegating extends SSLContext {
        Delegating(ServerTls tls) {
            super(new Spi(tls), current(tls).getProvider(), current(tls).getProtocol());
        }
    }

    /** Every operation goes to the current context, so each new engine comes from the newest files. */
    private static final class Spi extends SSLContextSpi {
        private final ServerTls tls;

        Spi(ServerTls tls) {
            this.tls = tls;
        }

        @Override
        protected void engineInit(KeyManager[] km, TrustManager[] tm, SecureRandom sr) throws KeyManagementException {
            throw new KeyManagementException("built from the " + tls.group().name + " group's files; not re-initable");
        }

        @Override
        protected SSLSocketFactory engineGetSocketFactory() {
            return current(tls).getSocketFactory();
        }

        @Override
        protected SSLServerSocketFactory engineGetServerSocketFactory() {
            return current(tls).getServerSocketFactory();
        }

        @Override
        protected SSLEngine engineCreateSSLEngine() {
            return current(tls).createSSLEngine();
        }

        @Override
        protected SSLEngine engineCreateSSLEngine(String host, int port) {
            return current(tls).createSSLEngine(host, port);
        }

        @Override
        protected SSLSessionContext engineGetServerSessionContext() {
            return current(tls).getServerSessionContext();
        }

        @Override
        protected SSLSessionContext engineGetClientSessionContext() {
            return current(tls).getClientSessionContext();
        }

        @Override
        protected SSLParameters engineGetDefaultSSLParameters() {
            return current(tls).getDefaultSSLParameters();
        }

        @Override
        protected SSLParameters engineGetSupportedSSLParameters() {
            return current(tls).getSupportedSSLParameters();
        }
    }
}
