package io.estuary.master.state.raft;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerReplyProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerRequestProto;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.apache.ratis.thirdparty.io.netty.bootstrap.Bootstrap;
import org.apache.ratis.thirdparty.io.netty.channel.Channel;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelFuture;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelHandlerContext;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelInitializer;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelOption;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelPipeline;
import org.apache.ratis.thirdparty.io.netty.channel.EventLoopGroup;
import org.apache.ratis.thirdparty.io.netty.channel.SimpleChannelInboundHandler;
import org.apache.ratis.thirdparty.io.netty.channel.socket.SocketChannel;
import org.apache.ratis.thirdparty.io.netty.channel.socket.nio.NioSocketChannel;
import org.apache.ratis.thirdparty.io.netty.handler.codec.protobuf.ProtobufDecoder;
import org.apache.ratis.thirdparty.io.netty.handler.codec.protobuf.ProtobufEncoder;
import org.apache.ratis.thirdparty.io.netty.handler.codec.protobuf.ProtobufVarint32FrameDecoder;
import org.apache.ratis.thirdparty.io.netty.handler.codec.protobuf.ProtobufVarint32LengthFieldPrepender;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslHandler;
import org.apache.ratis.util.NetUtils;
import org.apache.ratis.util.ProtoUtils;

/**
 * One connection from this master to another master's Raft port. With the cluster secret it is open only once both
 * sides proved it ({@link RaftHandshakeClient}); without one (the permissive mode, towards a master that does not
 * authenticate) it speaks Ratis at once. Either way it carries Ratis' own request and reply messages, matched by call
 * id. A connection that fails is closed and fails every outstanding call; Ratis then drops it and opens a new one.
 * Thread-safe.
 */
final class RaftPeerConnection implements Closeable {
    /** Connected, but the handshake did not admit this master (the peer refused it, or never answered it). */
    static final class HandshakeFailedException extends IOException {
        HandshakeFailedException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final String peer;
    private final long requestTimeoutMs;
    private final boolean authenticated;
    private final Map<Long, CompletableFuture<RaftNettyServerReplyProto>> calls = new ConcurrentHashMap<>();
    private final Channel channel;
    private volatile boolean answered;

    /**
     * Connects, and with a {@code secret} authenticates, or throws an {@link IOException} that says why
     * ({@link HandshakeFailedException} when connected but not admitted). A null {@code secret} skips the handshake.
     * With {@code tls} (null: none) the connection is TLS first; a failed TLS handshake (an untrusted certificate, a
     * plain port) fails here with an {@link IOException} saying so.
     */
    RaftPeerConnection(String peer, byte[] secret, RaftTls tls, EventLoopGroup group, long requestTimeoutMs)
            throws IOException {
        this.peer = peer;
        this.requestTimeoutMs = requestTimeoutMs;
        this.authenticated = secret != null;
        CompletableFuture<Void> admitted = new CompletableFuture<>();
        if (secret == null) admitted.complete(null);
        CompletableFuture<Void> secured = new CompletableFuture<>();
        if (tls == null) secured.complete(null);
        InetSocketAddress address = NetUtils.createSocketAddr(peer);
        ChannelFuture connect = new Bootstrap()
                .group(group)
                .channel(NioSocketChannel.class)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, requestTimeoutMs))
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ChannelPipeline p = ch.pipeline();
                        if (tls != null) {
                            // First: the authentication handshake and every Raft message are encrypted.
                            SslHandler ssl = tls.clientHandler(address.getHostString(), address.getPort());
                            ssl.handshakeFuture().addListener(f -> {
                                if (f.isSuccess()) {
                                    secured.complete(null);
                                } else {
                                    secured.completeExceptionally(new IOException(
                                            "TLS with the master at " + peer + " failed (estuary.tls.internal.*): "
                                                    + f.cause(),
                                            f.cause()));
                                }
                            });
                            p.addLast(ssl);
                        }
                        if (secret != null) p.addLast(new RaftHandshakeClient(secret, peer, admitted));
                        p.addLast(new ProtobufVarint32FrameDecoder());
                        p.addLast(new ProtobufDecoder(RaftNettyServerReplyProto.getDefaultInstance()));
                        p.addLast(new ProtobufVarint32LengthFieldPrepender());
                        p.addLast(new ProtobufEncoder());
                        p.addLast(new Replies());
                    }
                })
                .connect(address);
        this.channel = connect.channel();
        boolean connected = false;
        try {
            connect.get(requestTimeoutMs * 2, TimeUnit.MILLISECONDS);
            connected = true;
            try {
                secured.get(requestTimeoutMs * 2, TimeUnit.MILLISECONDS);
            } catch (ExecutionException | TimeoutException e) {
                channel.close();
                Throwable c = e instanceof ExecutionException ? e.getCause() : e;
                throw c instanceof IOException
                        ? (IOException) c
                        : new IOException("no TLS handshake with the master at " + peer + ": " + c, c);
            }
            admitted.get(requestTimeoutMs * 2, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            // Ratis interrupts calls it no longer needs (an election decided): finish the handshake before closing,
            // so the peer does not take this for a handshake cut halfway.
            admitted.whenComplete((ok, failed) -> channel.close());
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while connecting to the master at " + peer);
        } catch (ExecutionException e) {
            channel.close();
            Throwable c = e.getCause();
            if (connected) throw new HandshakeFailedException(String.valueOf(c.getMessage()), c);
            throw c instanceof IOException
                    ? (IOException) c
                    : new IOException("cannot connect to the master at " + peer + ": " + c, c);
        } catch (TimeoutException e) {
            channel.close();
            String why =
                    "no authenticated connection to the master at " + peer + " within " + requestTimeoutMs * 2 + " ms";
            if (connected) throw new HandshakeFailedException(why + " (it did not answer the handshake)", e);
            throw new TimeoutIOException(why, e);
        }
    }

    /** Whether this connection proved the cluster secret (false: it speaks Ratis without a handshake). */
    boolean authenticated() {
        return authenticated;
    }

    /** Whether any reply came back on this connection. */
    boolean answered() {
        return answered;
    }

    /** Sends one request and waits for its reply (Ratis calls these methods from its own threads, one per peer). */
    RaftNettyServerReplyProto call(RaftRpcRequestProto request, RaftNettyServerRequestProto message)
            throws IOException {
        CompletableFuture<RaftNettyServerReplyProto> reply = new CompletableFuture<>();
        long callId = request.getCallId();
        if (calls.putIfAbsent(callId, reply) != null) {
            throw new IOException("call " + callId + " to " + peer + " is already outstanding");
        }
        if (!channel.isActive()) {
            calls.remove(callId, reply);
            throw new AlreadyClosedException("the connection to the master at " + peer + " is closed");
        }
        channel.writeAndFlush(message).addListener(f -> {
            if (!f.isSuccess() && calls.remove(callId, reply)) {
                reply.completeExceptionally(new IOException("sending to the master at " + peer + " failed", f.cause()));
                channel.close();
            }
        });
        long waitMs = requestTimeoutMs + request.getTimeoutMs();
        try {
            return reply.get(waitMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted waiting for the master at " + peer);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            throw c instanceof IOException ? (IOException) c : new IOException(String.valueOf(c), c);
        } catch (TimeoutException e) {
            throw new TimeoutIOException("no reply from the master at " + peer + " within " + waitMs + " ms", e);
        } finally {
            calls.remove(callId, reply);
        }
    }

    /** False once the connection closed; Ratis then opens a new one for the next call. */
    boolean isOpen() {
        return channel.isActive();
    }

    @Override
    public void close() {
        channel.close();
        failAll(new AlreadyClosedException("the connection to the master at " + peer + " was closed"));
    }

    private void failAll(IOException why) {
        for (Long id : calls.keySet()) {
            CompletableFuture<RaftNettyServerReplyProto> f = calls.remove(id);
            if (f != null) f.completeExceptionally(why);
        }
    }

    private final class Replies extends SimpleChannelInboundHandler<RaftNettyServerReplyProto> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, RaftNettyServerReplyProto reply) {
            answered = true;
            CompletableFuture<RaftNettyServerReplyProto> f = calls.remove(RaftRpcMessages.callId(reply));
            if (f == null) return; // its caller gave up waiting
            if (reply.hasExceptionReply()) {
                Object e = ProtoUtils.toObject(reply.getExceptionReply().getException());
                f.completeExceptionally(
                        e instanceof IOException
                                ? (IOException) e
                                : new IOException("the master at " + peer + ": " + e));
            } else {
                f.complete(reply);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            failAll(new AlreadyClosedException("the connection to the master at " + peer + " closed"));
            super.channelInactive(ctx);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            failAll(new IOException("the connection to the master at " + peer + " failed", cause));
            ctx.close();
        }
    }
}
