package io.estuary.master.state.raft;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.impl.ClientProtoUtils;
import org.apache.ratis.netty.NettyConfigKeys;
import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotReplyProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotRequestProto;
import org.apache.ratis.proto.RaftProtos.RaftClientRequestProto;
import org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteReplyProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteRequestProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionReplyProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionRequestProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerReplyProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerRequestProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.rpc.CallId;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.RaftServerRpcWithProxy;
import org.apache.ratis.thirdparty.io.netty.bootstrap.ServerBootstrap;
import org.apache.ratis.thirdparty.io.netty.channel.Channel;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelHandlerContext;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelInitializer;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelPipeline;
import org.apache.ratis.thirdparty.io.netty.channel.EventLoopGroup;
import org.apache.ratis.thirdparty.io.netty.channel.SimpleChannelInboundHandler;
import org.apache.ratis.thirdparty.io.netty.channel.nio.NioEventLoopGroup;
import org.apache.ratis.thirdparty.io.netty.channel.socket.SocketChannel;
import org.apache.ratis.thirdparty.io.netty.channel.socket.nio.NioServerSocketChannel;
import org.apache.ratis.thirdparty.io.netty.handler.codec.protobuf.ProtobufDecoder;
import org.apache.ratis.thirdparty.io.netty.handler.codec.protobuf.ProtobufEncoder;
import org.apache.ratis.thirdparty.io.netty.handler.codec.protobuf.ProtobufVarint32FrameDecoder;
import org.apache.ratis.thirdparty.io.netty.handler.codec.protobuf.ProtobufVarint32LengthFieldPrepender;
import org.apache.ratis.thirdparty.io.netty.util.concurrent.DefaultThreadFactory;
import org.apache.ratis.util.PeerProxyMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A master's Raft transport with authentication: Ratis' netty message format (the envelopes of its own netty
 * transport, varint-framed protobuf), behind {@link RaftHandshake} on every connection, both ways. Ratis' own netty
 * transport builds its pipelines in private code with no hook, hence this transport. It serves what masters send
 * each other (vote, pre-vote, append, install snapshot, start election for leadership transfer); Raft client
 * writes never come over the network here (a master submits to its own Raft server); the one client request
 * served is the stale read by which a master asks another which formats it applies ({@link #staleRead}). Requests
 * run on the channel's event loop, as in Ratis' netty transport.
 *
 * <p>With estuary.auth.mode=permissive (a rolling upgrade from masters without authentication) the port also admits
 * peers that do not authenticate ({@link RaftHandshakeServer}), and this master speaks to each peer the way it
 * answers ({@link RaftPeerModes}).
 *
 * <p>With TLS on the {@code internal} port group ({@link RaftTls}) every connection, both ways, starts with TLS, before
 * the authentication handshake; in the permissive mode too (masters of the release before this one have no TLS:
 * turn TLS on after the upgrade). Thread-safe.
 */
final class AuthenticatedRaftService
        extends RaftServerRpcWithProxy<RaftPeerConnection, PeerProxyMap<RaftPeerConnection>> {
    private static final Logger LOG = LoggerFactory.getLogger(AuthenticatedRaftService.class);

    private final RaftServer server;
    private final RpcType type;
    private final RaftAuthFailures failures;
    private final EventLoopGroup boss = new NioEventLoopGroup(1, new DefaultThreadFactory("raft-auth-boss", true));
    private final EventLoopGroup workers = new NioEventLoopGroup(0, new DefaultThreadFactory("raft-auth-server", true));
    private final EventLoopGroup clientGroup;
    private final InetSocketAddress bindAddress;
    private final RaftPeerModes modes;
    private final ClientId readerId = ClientId.randomId();
    private volatile Channel listening;

    AuthenticatedRaftService(
            RaftServer server,
            RpcType type,
            byte[] secret,
            RaftAuthFailures failures,
            boolean permissive,
            RaftTls tls) {
        this(
                server,
                type,
                secret,
                failures,
                tls,
                new RaftPeerModes(permissive),
                new NioEventLoopGroup(0, new DefaultThreadFactory("raft-auth-client", true)));
    }

    private AuthenticatedRaftService(
            RaftServer server,
            RpcType type,
            byte[] secret,
            RaftAuthFailures failures,
            RaftTls tls,
            RaftPeerModes modes,
            EventLoopGroup clientGroup) {
        super(
                server::getId,
                id -> new PeerProxyMap<>(
                        id.toString(),
                        peer -> new RaftPeerConnection(
                                peer.getAddress(),
                                modes.handshake(peer.getId()) ? secret : null,
                                tls,
                                clientGroup,
                                requestTimeoutMs(server))));
        this.server = server;
        this.type = type;
        this.failures = failures;
        this.modes = modes;
        this.clientGroup = clientGroup;
        boolean permissive = modes.permissive();
        String host = NettyConfigKeys.Server.host(server.getProperties());
        int port = NettyConfigKeys.Server.port(server.getProperties());
        this.bindAddress =
                host == null || host.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
        long handshakeTimeoutMs = Math.max(1000, requestTimeoutMs(server) * 2);
        this.bootstrap = new ServerBootstrap()
                .group(boss, workers)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ChannelPipeline p = ch.pipeline();
                        if (tls != null) p.addLast(tls.serverHandler()); // first: the handshake is encrypted too
                        p.addLast(new RaftHandshakeServer(secret, failures, handshakeTimeoutMs, permissive));
                        p.addLast(new ProtobufVarint32FrameDecoder());
                        p.addLast(new ProtobufDecoder(RaftNettyServerRequestProto.getDefaultInstance()));
                        p.addLast(new ProtobufVarint32LengthFieldPrepender());
                        p.addLast(new ProtobufEncoder());
                        p.addLast(new Requests());
                    }
                });
    }

    private final ServerBootstrap bootstrap;

    private static long requestTimeoutMs(RaftServer server) {
        return RaftServerConfigKeys.Rpc.requestTimeout(server.getProperties()).toLong(TimeUnit.MILLISECONDS);
    }

    @Override
    public RpcType getRpcType() {
        return type;
    }

    @Override
    protected void startImpl() throws IOException {
        try {
            listening = bootstrap.bind(bindAddress).syncUninterruptibly().channel();
        } catch (RuntimeException e) {
            throw new IOException(getId() + ": cannot listen for Raft peers on " + bindAddress, e);
        }
    }

    @Override
    public void closeImpl() throws IOException {
        Channel c = listening;
        if (c != null) c.close().syncUninterruptibly();
        try {
            super.closeImpl(); // the connections to the other masters
        } finally {
            boss.shutdownGracefully(0, 100, TimeUnit.MILLISECONDS);
            workers.shutdownGracefully(0, 100, TimeUnit.MILLISECONDS);
            clientGroup.shutdownGracefully(0, 100, TimeUnit.MILLISECONDS);
        }
    }

    @Override
    public InetSocketAddress getInetSocketAddress() {
        Channel c = listening;
        return c == null ? bindAddress : (InetSocketAddress) c.localAddress();
    }

    /** Connections to this Raft port refused since start. */
    RaftAuthFailures failures() {
        return failures;
    }

    @Override
    public RequestVoteReplyProto requestVote(RequestVoteRequestProto request) throws IOException {
        return send(
                        request.getServerRequest(),
                        RaftNettyServerRequestProto.newBuilder()
                                .setRequestVoteRequest(request)
                                .build())
                .getRequestVoteReply();
    }

    @Override
    public StartLeaderElectionReplyProto startLeaderElection(StartLeaderElectionRequestProto request)
            throws IOException {
        return send(
                        request.getServerRequest(),
                        RaftNettyServerRequestProto.newBuilder()
                                .setStartLeaderElectionRequest(request)
                                .build())
                .getStartLeaderElectionReply();
    }

    @Override
    public AppendEntriesReplyProto appendEntries(AppendEntriesRequestProto request) throws IOException {
        return send(
                        request.getServerRequest(),
                        RaftNettyServerRequestProto.newBuilder()
                                .setAppendEntriesRequest(request)
                                .build())
                .getAppendEntriesReply();
    }

    @Override
    public InstallSnapshotReplyProto installSnapshot(InstallSnapshotRequestProto request) throws IOException {
        return send(
                        request.getServerRequest(),
                        RaftNettyServerRequestProto.newBuilder()
                                .setInstallSnapshotRequest(request)
                                .build())
                .getInstallSnapshotReply();
    }

    private RaftNettyServerReplyProto send(RaftRpcRequestProto header, RaftNettyServerRequestProto message)
            throws IOException {
        RaftPeerId target = RaftPeerId.valueOf(header.getReplyId());
        RaftPeerConnection connection;
        try {
            connection = getProxies().getProxy(target);
        } catch (IOException e) {
            // A connection that failed to open (or to authenticate) is retried afresh on the next call.
            getProxies().resetProxy(target);
            if (e instanceof RaftPeerConnection.HandshakeFailedException) modes.handshakeFailed(target);
            throw e;
        }
        try {
            return connection.call(header, message);
        } catch (IOException e) {
            if (!connection.authenticated() && !connection.isOpen() && !connection.answered()) {
                modes.closedUnanswered(target);
            }
            getProxies().handleException(target, e, !connection.isOpen());
            throw e;
        }
    }

    /**
     * Asks {@code target} for a stale read of its state machine at index 0 (which any member answers, leader or
     * not), over this transport's connection to it: how a master learns which formats another applies.
     */
    RaftClientReply staleRead(RaftPeerId target) throws IOException {
        RaftClientRequest request = RaftClientRequest.newBuilder()
                .setClientId(readerId)
                .setServerId(target)
                .setGroupId(server.getGroupIds().iterator().next())
                .setCallId(CallId.getAndIncrement())
                .setMessage(Message.EMPTY)
                .setType(RaftClientRequest.staleReadRequestType(0))
                .build();
        RaftClientRequestProto proto = ClientProtoUtils.toRaftClientRequestProto(request);
        RaftNettyServerReplyProto reply = send(
                proto.getRpcRequest(),
                RaftNettyServerRequestProto.newBuilder()
                        .setRaftClientRequest(proto)
                        .build());
        return ClientProtoUtils.toRaftClientReply(reply.getRaftClientReply());
    }

    /** Answers the calls of an authenticated master. */
    private final class Requests extends SimpleChannelInboundHandler<RaftNettyServerRequestProto> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, RaftNettyServerRequestProto request) {
            RaftRpcRequestProto header = RaftRpcMessages.header(request);
            if (request.hasRaftClientRequest()) {
                answerRead(ctx, request.getRaftClientRequest(), header);
                return;
            }
            if (header == null) {
                LOG.warn(
                        "Closing the Raft connection from {}: it sent {}, which masters never send each other",
                        ctx.channel().remoteAddress(),
                        request.getRaftNettyServerRequestCase());
                ctx.close();
                return;
            }
            ctx.writeAndFlush(answer(request, header));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOG.warn("Closing the Raft connection from {}: {}", ctx.channel().remoteAddress(), cause.toString());
            ctx.close();
        }
    }

    /** Stale reads only: a master never sends another a write (it submits to its own Raft server). */
    private void answerRead(ChannelHandlerContext ctx, RaftClientRequestProto proto, RaftRpcRequestProto header) {
        RaftClientRequest request;
        try {
            request = ClientProtoUtils.toRaftClientRequest(proto);
        } catch (RuntimeException e) {
            ctx.writeAndFlush(RaftRpcMessages.failure(header, new IOException("malformed client request: " + e, e)));
            return;
        }
        if (!request.is(RaftClientRequestProto.TypeCase.STALEREAD)) {
            ctx.writeAndFlush(RaftRpcMessages.failure(
                    header, new IOException("only stale reads are served on the Raft port, not " + request.getType())));
            return;
        }
        java.util.concurrent.CompletableFuture<RaftClientReply> pending;
        try {
            pending = server.submitClientRequestAsync(request);
        } catch (IOException e) {
            ctx.writeAndFlush(RaftRpcMessages.failure(header, e));
            return;
        }
        pending.whenComplete((reply, e) -> ctx.writeAndFlush(
                e == null
                        ? RaftNettyServerReplyProto.newBuilder()
                                .setRaftClientReply(ClientProtoUtils.toRaftClientReplyProto(reply))
                                .build()
                        : RaftRpcMessages.failure(
                                header,
                                e instanceof IOException ? (IOException) e : new IOException(e.toString(), e))));
    }

    private RaftNettyServerReplyProto answer(RaftNettyServerRequestProto request, RaftRpcRequestProto header) {
        try {
            switch (request.getRaftNettyServerRequestCase()) {
                case REQUESTVOTEREQUEST:
                    return RaftNettyServerReplyProto.newBuilder()
                            .setRequestVoteReply(server.requestVote(request.getRequestVoteRequest()))
                            .build();
                case STARTLEADERELECTIONREQUEST:
                    return RaftNettyServerReplyProto.newBuilder()
                            .setStartLeaderElectionReply(
                                    server.startLeaderElection(request.getStartLeaderElectionRequest()))
                            .build();
                case APPENDENTRIESREQUEST:
                    return RaftNettyServerReplyProto.newBuilder()
                            .setAppendEntriesReply(server.appendEntries(request.getAppendEntriesRequest()))
                            .build();
                case INSTALLSNAPSHOTREQUEST:
                    return RaftNettyServerReplyProto.newBuilder()
                            .setInstallSnapshotReply(server.installSnapshot(request.getInstallSnapshotRequest()))
                            .build();
                default:
                    throw new IOException("not served here: " + request.getRaftNettyServerRequestCase());
            }
        } catch (IOException e) {
            return RaftRpcMessages.failure(header, e);
        } catch (RuntimeException e) {
            return RaftRpcMessages.failure(header, new IOException(e.toString(), e));
        }
    }
}
