package io.estuary.master.state.raft;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import io.estuary.common.time.Clock;
import io.estuary.network.tls.JdkClientTls;
import io.estuary.server.tls.JdkServerTls;
import javax.net.ssl.SSLEngine;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslHandler;

/**
 * TLS on the masters' Raft port, from the {@code internal} port group: the server presents the group's certificate
 * (and with {@code clientAuth} requires one from the group's trust bundle), each master's connections to the others
 * trust that bundle, check the peer's host unless {@code estuary.tls.verifyHostname} is off, and present the group's
 * certificate with {@code clientAuth}. Ratis runs on its own relocated Netty, whose {@link SslHandler} takes a JDK
 * engine: each new connection gets an engine from the newest usable files, so renewed certificates reach new
 * connections without a restart. The handler goes first in the pipeline, so the Raft authentication handshake and
 * every Raft message are encrypted. Thread-safe.
 */
public final class RaftTls {
    private final JdkServerTls server;
    private final JdkClientTls client;

    private RaftTls(JdkServerTls server, JdkClientTls client) {
        this.server = server;
        this.client = client;
    }

    /**
     * The Raft port's TLS, or null when {@code estuary.tls.internal.enabled} is false. Reads the files now: missing
     * or unusable ones fail here, at start, naming the file and its key.
     */
    public static RaftTls fromConf(EstuaryConf conf, Clock clock) {
        JdkServerTls server = JdkServerTls.fromConf(conf, TlsConfig.Group.INTERNAL, clock);
        if (server == null) return null;
        return new RaftTls(server, JdkClientTls.fromConf(conf, TlsConfig.Group.INTERNAL, clock));
    }

    /** The TLS handler for a connection accepted on the Raft port. */
    SslHandler serverHandler() {
        SSLEngine engine = server.sslContext().createSSLEngine();
        engine.setUseClientMode(false);
        engine.setSSLParameters(server.sslParameters());
        return new SslHandler(engine);
    }

    /** The TLS handler for a connection to the master at {@code host:port}. */
    SslHandler clientHandler(String host, int port) {
        return new SslHandler(client.newEngine(host, port));
    }
}
