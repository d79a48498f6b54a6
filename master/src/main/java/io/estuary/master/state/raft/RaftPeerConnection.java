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
import org.apache.ratis.util.NetUtils;
import org.apache.ratis.util.ProtoUtils;

/**
 * One authenticated connection from this master to another master's Raft port: it is open only once both sides
 * proved the cluster secret ({@link RaftHandshakeClient}), then carries Ratis' own request and reply messages,
 * matched by call id. A connection that fails is closed and fails every outstanding call; Ratis then drops it and
 * opens a new one. Thread-safe.
 */
final class RaftPeerConnection implements Closeable {
    private final String peer;
    private final long requestTimeoutMs;
    private final Map<Long, CompletableFuture<RaftNettyServerReplyProto>> calls = new ConcurrentHashMap<>();
    private final Channel channel;

    /** Connects and authenticates, or throws an {@link IOException} that says why. */
    RaftPeerConnection(String peer, byte[] secret, EventLoopGroup group, long requestTimeoutMs) throws IOException {
        this.peer = peer;
        this.requestTimeoutMs = requestTimeoutMs;
        CompletableFuture<Void> authenticated = new CompletableFuture<>();
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
                        p.addLast(new RaftHandshakeClient(secret, peer, authenticated));
                        p.addLast(new ProtobufVarint32FrameDecoder());
                        p.addLast(new ProtobufDecoder(RaftNettyServerReplyProto.getDefaultInstance()));
                        p.addLast(new ProtobufVarint32LengthFieldPrepender());
                        p.addLast(new ProtobufEncoder());
                        p.addLast(new Replies());
                    }
                })
                .connect(address);
        this.channel = connect.channel();
        try {
            connect.get(requestTimeoutMs * 2, TimeUnit.MILLISECONDS);
            authenticated.get(requestTimeoutMs * 2, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            // Ratis interrupts calls it no longer needs (an election decided): finish the handshake before closing,
            // so the peer does not take this for a handshake cut halfway.
            authenticated.whenComplete((ok, failed) -> channel.close());
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while connecting to the master at " + peer);
        } catch (ExecutionException e) {
            channel.close();
            Throwable c = e.getCause();
            throw c instanceof IOException
                    ? (IOException) c
                    : new IOException("cannot connect to the master at " + peer + ": " + c, c);
        } catch (TimeoutException e) {
            channel.close();
            throw new TimeoutIOException(
                    "no authenticated connection to the master at " + peer + " within " + requestTimeoutMs * 2 + " ms",
                    e);
        }
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
