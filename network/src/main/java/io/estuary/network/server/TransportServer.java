package io.estuary.network.server;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.time.Clock;
import io.estuary.common.util.EstuaryException;
import io.estuary.network.auth.ServerAuth;
import io.estuary.network.netty.NettyUtils;
import io.estuary.network.protocol.FrameDecoder;
import io.estuary.network.protocol.MessageEncoder;
import io.estuary.network.protocol.ProtocolRange;
import io.estuary.network.tls.ServerTls;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.EventExecutor;
import java.io.Closeable;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Netty server on one port. Binds the configured host, or every interface only when asked to. Holds at most
 * {@code estuary.network.server.maxConnections} connections and closes those idle for
 * {@code estuary.network.server.idleTimeout} (see {@link RequestHandler} for what counts as idle). Frames are bounded
 * by {@code estuary.network.maxFrameSize}, or by the handler's own lower {@link RpcHandler#frameLimit()}.
 */
public final class TransportServer implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(TransportServer.class);

    private final String name;
    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final Channel channel;
    private final int port;
    private volatile ServerTls tls; // null: plain

    public TransportServer(EstuaryConf conf, String name, String host, int port, RpcHandler handler) {
        this(conf, name, host, port, handler, TransportObserver.NONE);
    }

    /** A server that tells {@code observer} about its connections, pushes, chunks and failures. */
    public TransportServer(
            EstuaryConf conf, String name, String host, int port, RpcHandler handler, TransportObserver observer) {
        this(conf, name, host, port, handler, observer, ProtocolRange.THIS_RELEASE, Clock.system());
    }

    /** As above, reading the time (how long each push and chunk fetch took to answer) from {@code clock}. */
    public TransportServer(
            EstuaryConf conf,
            String name,
            String host,
            int port,
            RpcHandler handler,
            TransportObserver observer,
            Clock clock) {
        this(conf, name, host, port, handler, observer, ProtocolRange.THIS_RELEASE, clock);
    }

    /**
     * A server speaking {@code speaks} (tests use it to play a server of another release), timing answers with
     * {@code clock}.
     */
    public TransportServer(
            EstuaryConf conf,
            String name,
            String host,
            int port,
            RpcHandler handler,
            TransportObserver observer,
            ProtocolRange speaks,
            Clock clock) {
        this(
                conf,
                name,
                host,
                port,
                handler,
                Options.defaults().observer(observer).speaks(speaks).clock(clock));
    }

    /** A server configured by {@code options} (observer, protocol range, clock, authentication). */
    public TransportServer(EstuaryConf conf, String name, String host, int port, RpcHandler handler, Options options) {
        TransportObserver observer = options.observer;
        ProtocolRange speaks = options.speaks;
        Clock clock = options.clock;
        ServerAuth auth = options.auth;
        this.tls = options.tls; // before the bind: no connection is ever served plain by mistake
        io.estuary.common.util.RateLimitedLog warnings = ServerHandshake.warnings(clock);
        this.name = name;
        long maxFrame = conf.get(NetworkConfig.MAX_FRAME_SIZE);
        int maxHeaderString = conf.get(NetworkConfig.MAX_STRING_BYTES);
        long idleMs = conf.get(NetworkConfig.IDLE_TIMEOUT);
        ConnectionLimit connections = new ConnectionLimit(name, conf.get(NetworkConfig.MAX_CONNECTIONS));
        this.boss = NettyUtils.eventLoops(1, name + "-accept");
        this.workers = NettyUtils.eventLoops(conf.get(NetworkConfig.IO_THREADS), name + "-io");
        ServerBootstrap b = new ServerBootstrap()
                .group(boss, workers)
                .channel(NettyUtils.serverChannelClass())
                .option(ChannelOption.SO_REUSEADDR, true)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childOption(ChannelOption.ALLOCATOR, NettyUtils.allocator())
                .childOption(ChannelOption.RCVBUF_ALLOCATOR, NettyUtils.receiveBuffers())
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        initPipeline(
                                ch.pipeline(),
                                maxFrame,
                                maxHeaderString,
                                name,
                                handler,
                                observer,
                                connections,
                                idleMs,
                                clock);
                        // Before the decoder: the versions and identities are exchanged before any frame (after the
                        // idle timer, which must also close a connection that never says hello).
                        ch.pipeline()
                                .addBefore(
                                        "encoder",
                                        "handshake",
                                        new ServerHandshake(name, speaks, auth, observer, warnings));
                        ServerTls t = tls;
                        if (t != null) t.addTo(ch.pipeline(), name); // first: everything after it is encrypted
                    }
                });
        InetSocketAddress addr =
                conf.get(NetworkConfig.BIND_WILDCARD) ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
        ChannelFuture f = b.bind(addr).awaitUninterruptibly();
        if (!f.isSuccess()) {
            close();
            throw new EstuaryException(
                    name + " cannot listen on " + addr + ": " + f.cause().getMessage(), f.cause());
        }
        this.channel = f.channel();
        this.port = ((InetSocketAddress) channel.localAddress()).getPort();
        LOG.info("{} listening on {}", name, channel.localAddress());
    }

    /**
     * Installs a server connection's handlers after the handshake: the encoder, the frame decoder and the handler
     * that passes requests to {@code handler}. Public so tests can drive a handler through the real pipeline on an {@code EmbeddedChannel}.
     */
    public static void initPipeline(
            ChannelPipeline pipeline,
            long maxFrameSize,
            String serverName,
            RpcHandler handler,
            TransportObserver observer) {
        initPipeline(pipeline, maxFrameSize, serverName, handler, observer, Clock.system());
    }

    /** As above, timing answers with {@code clock} (a test's manual clock). */
    public static void initPipeline(
            ChannelPipeline pipeline,
            long maxFrameSize,
            String serverName,
            RpcHandler handler,
            TransportObserver observer,
            Clock clock) {
        initPipeline(
                pipeline,
                maxFrameSize,
                Integer.MAX_VALUE,
                serverName,
                handler,
                observer,
                new ConnectionLimit(serverName, Integer.MAX_VALUE),
                0,
                clock);
    }

    /**
     * The pipeline with every bound: header strings, connections, idle time (0: never idle), and the handler's own
     * frame limit when it is lower than the server's.
     */
    static void initPipeline(
            ChannelPipeline pipeline,
            long maxFrameSize,
            int maxHeaderString,
            String serverName,
            RpcHandler handler,
            TransportObserver observer,
            ConnectionLimit connections,
            long idleMs,
            Clock clock) {
        // Next to the socket, so it sees every read and write.
        if (idleMs > 0) pipeline.addLast("idle", new IdleStateHandler(0, 0, idleMs, TimeUnit.MILLISECONDS));
        RpcHandler.FrameLimit own = handler.frameLimit();
        boolean ownLimit = own != null && own.bytes < maxFrameSize;
        pipeline.addLast("encoder", MessageEncoder.INSTANCE)
                .addLast(
                        "decoder",
                        new FrameDecoder(
                                ownLimit ? own.bytes : maxFrameSize,
                                ownLimit ? own.key : NetworkConfig.MAX_FRAME_SIZE.key(),
                                maxHeaderString,
                                handler.receiveProgress(pipeline.channel())))
                .addLast("handler", new RequestHandler(handler, serverName, observer, connections, idleMs, clock));
    }

    /**
     * Requests a server connection received and has not answered yet, for a server's own watch over connections that
     * stopped making progress. Call on the connection's event loop.
     */
    public static int unansweredRequests(Channel ch) {
        RequestHandler handler = ch.pipeline().get(RequestHandler.class);
        return handler == null ? 0 : handler.unanswered();
    }

    /**
     * A server connection's state for a log line about a connection that stopped making progress: what its decoder
     * received, decoded and holds (see {@link FrameDecoder#describe}), the requests it has not answered yet, and
     * whether it is being read. Call on the connection's event loop.
     */
    public static String describeConnection(Channel ch) {
        FrameDecoder decoder = ch.pipeline().get(FrameDecoder.class);
        RequestHandler handler = ch.pipeline().get(RequestHandler.class);
        return (decoder == null ? "no decoder" : decoder.describe())
                + "; " + (handler == null ? "no handler" : handler.unanswered() + " requests unanswered")
                + "; reading " + (ch.config().isAutoRead() ? "on" : "paused");
    }

    /**
     * What a server is told besides its address and handler, each with a default: observer {@link
     * TransportObserver#NONE}, {@link ProtocolRange#THIS_RELEASE}, the system clock, {@link ServerAuth#off()}, no TLS.
     * Immutable: each setter returns a copy.
     */
    public static final class Options {
        private static final Options DEFAULTS =
                new Options(TransportObserver.NONE, ProtocolRange.THIS_RELEASE, Clock.system(), ServerAuth.off(), null);

        final TransportObserver observer;
        final ProtocolRange speaks;
        final Clock clock;
        final ServerAuth auth;
        final ServerTls tls;

        private Options(TransportObserver observer, ProtocolRange speaks, Clock clock, ServerAuth auth, ServerTls tls) {
            this.observer = java.util.Objects.requireNonNull(observer, "observer");
            this.speaks = java.util.Objects.requireNonNull(speaks, "speaks");
            this.clock = java.util.Objects.requireNonNull(clock, "clock");
            this.auth = java.util.Objects.requireNonNull(auth, "auth");
            this.tls = tls;
        }

        public static Options defaults() {
            return DEFAULTS;
        }

        /** Who hears about connections, pushes, chunks, failures and failed authentications. */
        public Options observer(TransportObserver observer) {
            return new Options(observer, speaks, clock, auth, tls);
        }

        /** The protocol versions spoken (tests play a server of another release with it). */
        public Options speaks(ProtocolRange speaks) {
            return new Options(observer, speaks, clock, auth, tls);
        }

        /** The clock that times answers. */
        public Options clock(Clock clock) {
            return new Options(observer, speaks, clock, auth, tls);
        }

        /** How connections authenticate. */
        public Options auth(ServerAuth auth) {
            return new Options(observer, speaks, clock, auth, tls);
        }

        /** TLS for every connection from the first ({@code null}: plain). */
        public Options tls(ServerTls tls) {
            return new Options(observer, speaks, clock, auth, tls);
        }
    }

    /**
     * Serves new connections with TLS ({@code null}: plain) from now on. Servers give it in {@link Options#tls} so
     * that it holds from the first connection; this is for tests that switch a running server.
     */
    public TransportServer withTls(ServerTls tls) {
        this.tls = tls;
        return this;
    }

    /** The address the server socket is bound to. */
    public InetSocketAddress boundAddress() {
        return (InetSocketAddress) channel.localAddress();
    }

    /** The server's threads (the accepting one first), for hang detection: each is a single-threaded executor. */
    public List<EventExecutor> eventLoops() {
        List<EventExecutor> out = new ArrayList<>();
        for (EventExecutor e : boss) out.add(e);
        for (EventExecutor e : workers) out.add(e);
        return out;
    }

    public String name() {
        return name;
    }

    /** The bound port (the real one when 0 was asked for). */
    public int port() {
        return port;
    }

    @Override
    public void close() {
        if (channel != null) channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
