package io.estuary.network.client;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.network.auth.Credentials;
import io.estuary.network.netty.NettyUtils;
import io.estuary.network.protocol.FrameDecoder;
import io.estuary.network.protocol.MessageEncoder;
import io.estuary.network.protocol.ProtocolRange;
import io.estuary.network.tls.ClientTls;
import io.estuary.network.tls.ClientTlsGuard;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import java.io.Closeable;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Opens and caches one connection per remote address. Shared by everything in a process (one factory per
 * process role), so threads and connections do not grow with the number of shuffles. Every connection proves the
 * factory's {@link Credentials} in its handshake (protocol 6 on) and checks the server's proof of the same secret;
 * a server that refuses them fails the connect with {@code UNAUTHENTICATED}.
 */
public final class TransportClientFactory implements Closeable {
    private final EventLoopGroup loops;
    private final PooledByteBufAllocator allocator;
    private final long maxFrameSize;
    private final long timeoutMs;
    private final int connectTimeoutMs;
    private final ProtocolRange speaks;
    private final Credentials credentials;
    private final Map<String, TransportClient> clients = new ConcurrentHashMap<>();
    private final Map<String, Object> connectLocks = new ConcurrentHashMap<>();
    private volatile ClientTls tls; // null: plain

    public TransportClientFactory(EstuaryConf conf, String name) {
        this(conf, name, ProtocolRange.THIS_RELEASE);
    }

    /** A factory whose connections speak only {@code protocolVersion}: tests play a client of another release. */
    public TransportClientFactory(EstuaryConf conf, String name, int protocolVersion) {
        this(conf, name, ProtocolRange.only(protocolVersion));
    }

    /** A factory whose connections speak {@code speaks} (tests play clients of other releases with it). */
    public TransportClientFactory(EstuaryConf conf, String name, ProtocolRange speaks) {
        this(conf, name, speaks, Credentials.NONE);
    }

    /** A factory whose connections prove {@code credentials} to every server (and check each server's proof). */
    public TransportClientFactory(EstuaryConf conf, String name, Credentials credentials) {
        this(conf, name, ProtocolRange.THIS_RELEASE, credentials);
    }

    /** A factory whose connections speak {@code speaks} and prove {@code credentials}. */
    public TransportClientFactory(EstuaryConf conf, String name, ProtocolRange speaks, Credentials credentials) {
        this.speaks = speaks;
        this.credentials = java.util.Objects.requireNonNull(credentials, "credentials");
        this.loops = NettyUtils.eventLoops(conf.get(NetworkConfig.IO_THREADS), name);
        this.allocator = NettyUtils.allocator();
        this.maxFrameSize = conf.get(NetworkConfig.MAX_FRAME_SIZE);
        this.timeoutMs = conf.get(NetworkConfig.RPC_TIMEOUT);
        this.connectTimeoutMs = (int) Math.min(Integer.MAX_VALUE, conf.get(NetworkConfig.CONNECT_TIMEOUT));
    }

    /** What this factory's connections prove themselves with ({@link Credentials#NONE}: anonymous). */
    public Credentials credentials() {
        return credentials;
    }

    /** Opens new connections with TLS ({@code null}: plain); set it before the first connection. */
    public TransportClientFactory withTls(ClientTls tls) {
        this.tls = tls;
        return this;
    }

    /** The active connection to {@code host:port} if one is open, else null. Never blocks. */
    public TransportClient activeClient(String host, int port) {
        TransportClient c = clients.get(host + ":" + port);
        return c != null && c.isActive() ? c : null;
    }

    /** An active connection to {@code host:port}, opened if needed. */
    public TransportClient client(String host, int port) throws RemoteException {
        return client(host, port, tls);
    }

    /**
     * An active connection to {@code host:port}, opened with {@code tls} if needed: for a factory whose connections
     * go to port groups with different TLS settings (one address is always the same group).
     */
    public TransportClient client(String host, int port, ClientTls tls) throws RemoteException {
        String key = host + ":" + port;
        TransportClient c = clients.get(key);
        if (c != null && c.isActive()) return c;
        synchronized (
                connectLocks.computeIfAbsent(key, k -> new Object())) { // per address: a dead host delays only itself
            c = clients.get(key);
            if (c != null && c.isActive()) return c;
            TransportClient replaced = c;
            c = connect(host, port, tls);
            clients.put(key, c);
            if (replaced != null) replaced.close(); // closed, or announced closing by its server
            return c;
        }
    }

    private TransportClient connect(String host, int port, ClientTls tls) throws RemoteException {
        try {
            return connect(host, port, speaks.newest(), tls);
        } catch (VersionRetry retry) {
            // A server that speaks only an older version this client also speaks (release 0.1.0): say hello with it.
            return connect(host, port, retry.version, tls);
        }
    }

    /** A refused hello worth repeating with {@link #version} on a new connection. */
    private static final class VersionRetry extends RemoteException {
        private static final long serialVersionUID = 1L;
        final int version;

        VersionRetry(RemoteException refusal, int version) {
            super(refusal.status(), refusal.getMessage(), refusal);
            this.version = version;
        }
    }

    private TransportClient connect(String host, int port, int helloVersion, ClientTls tls) throws RemoteException {
        String remote = host + ":" + port;
        ResponseHandler handler = new ResponseHandler(remote);
        ClientHandshake handshake = new ClientHandshake(remote, speaks, helloVersion, credentials);
        AtomicReference<ClientTlsGuard> tlsGuard = new AtomicReference<>(); // set on the event loop
        Bootstrap b = new Bootstrap()
                .group(loops)
                .channel(NettyUtils.clientChannelClass())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMs)
                .option(ChannelOption.ALLOCATOR, allocator)
                .option(ChannelOption.RCVBUF_ALLOCATOR, NettyUtils.receiveBuffers())
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline()
                                .addLast("handshake", handshake)
                                .addLast("encoder", MessageEncoder.INSTANCE)
                                .addLast("decoder", new FrameDecoder(maxFrameSize))
                                .addLast("handler", handler);
                        if (tls != null) tlsGuard.set(tls.addTo(ch.pipeline(), host, port)); // first: all encrypted
                    }
                });
        ChannelFuture f = b.connect(host, port);
        if (!f.awaitUninterruptibly(connectTimeoutMs + 1000L, TimeUnit.MILLISECONDS)) {
            f.channel().close();
            throw RemoteException.noAnswer(
                    "connecting to " + remote + " timed out after " + connectTimeoutMs + " ms", null);
        }
        if (!f.isSuccess()) {
            throw RemoteException.noAnswer(
                    "cannot connect to " + remote + ": " + f.cause().getMessage(), f.cause());
        }
        Channel ch = f.channel();
        // The first bytes each way are the versions: nothing is sent before both sides know they understand each other.
        if (!handshake.done().awaitUninterruptibly(timeoutMs, TimeUnit.MILLISECONDS)) {
            ch.close();
            throw RemoteException.noAnswer(
                    remote + " did not answer the protocol handshake within " + timeoutMs + " ms", null);
        }
        if (!handshake.done().isSuccess()) {
            ch.close();
            Throwable why = handshake.done().cause();
            ClientTlsGuard guard = tlsGuard.get();
            if (guard != null && guard.failureStatus() != null) { // say why TLS failed, not "connection closed"
                throw new RemoteException(guard.failureStatus(), guard.failureMessage(), why);
            }
            if (why instanceof RemoteException && handshake.retryVersion() > 0 && helloVersion == speaks.newest()) {
                throw new VersionRetry((RemoteException) why, handshake.retryVersion());
            }
            throw why instanceof RemoteException ? (RemoteException) why : new RemoteException(why.getMessage(), why);
        }
        return new TransportClient(
                ch, handler, timeoutMs, remote, handshake.done().getNow());
    }

    @Override
    public void close() {
        for (TransportClient c : clients.values()) c.close();
        clients.clear();
        loops.shutdownGracefully(0, 2, TimeUnit.SECONDS);
    }
}
