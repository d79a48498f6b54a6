package io.estuary.network.server;

import io.estuary.common.config.NetworkConfig;
import io.estuary.common.status.StatusCode;
import io.estuary.common.time.Clock;
import io.estuary.common.util.FatalErrors;
import io.estuary.network.buffer.ManagedBuffer;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.protocol.ChunkFetchFailure;
import io.estuary.network.protocol.ChunkFetchRequest;
import io.estuary.network.protocol.ChunkFetchSuccess;
import io.estuary.network.protocol.Message;
import io.estuary.network.protocol.ProtocolException;
import io.estuary.network.protocol.PushData;
import io.estuary.network.protocol.PushMergedData;
import io.estuary.network.protocol.RpcFailure;
import io.estuary.network.protocol.RpcRequest;
import io.estuary.network.protocol.RpcResponse;
import io.estuary.network.protocol.StreamClose;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.timeout.IdleStateEvent;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Server side of one connection: hands each message to the {@link RpcHandler} and writes its answer back, telling
 * the server's {@link TransportObserver} about each answer on the way out.
 *
 * <p>Also the connection's limits: a connection beyond the server's {@link ConnectionLimit} is told why
 * ({@link StatusCode#RETRY_LATER}) and closed before the handler hears of it. A connection is closed as idle when
 * it has carried no traffic either way for the timeout <em>and</em> the server has owed it no answer for the
 * timeout (requests, pushes and chunk fetches count from arrival until their answer is written): a client waiting
 * on a slow answer is never idle. Whether the server has paused reading from it (back-pressure) does not keep a
 * connection open: a paused connection that reaches the timeout is read once, so a client held back with data
 * waiting in its socket shows traffic and stays, and one that sent nothing is closed one timeout later (else a peer
 * holding an unfinished frame and sending nothing more would keep its bytes, and the pause, for good). A
 * {@link VirtualMachineError} reaching this handler goes to {@link FatalErrors#check}.
 *
 * <p>Durations reported to the observer are read from the server's {@link Clock}; whether a connection is idle is
 * decided by the pipeline's {@code IdleStateHandler}, whose reports this handler only interprets.
 *
 * <p>One instance per connection; its events run on the connection's event loop, answers may be written from any
 * thread (the outstanding count is atomic).
 */
final class RequestHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(RequestHandler.class);

    private final RpcHandler rpcHandler;
    private final String serverName;
    private final TransportObserver observer;
    private final ConnectionLimit connections;
    private final long idleMs;
    /** Times each push and chunk fetch from arrival to answer for the observer. */
    private final Clock clock;
    /** Requests, pushes and chunk fetches received and not yet answered. */
    private final AtomicInteger outstanding = new AtomicInteger();
    /** Whether this connection holds a place in the limit (false: refused, being closed). */
    private boolean admitted;
    /** Whether it was owed an answer at the previous idle report. */
    private boolean owedAtLastIdleReport;
    /** Whether the previous idle report read a paused connection once to see whether its peer sends anything. */
    private boolean readAtLastIdleReport;

    /** Requests received on this connection and not yet answered. */
    int unanswered() {
        return outstanding.get();
    }

    RequestHandler(
            RpcHandler rpcHandler,
            String serverName,
            TransportObserver observer,
            ConnectionLimit connections,
            long idleMs,
            Clock clock) {
        this.rpcHandler = rpcHandler;
        this.serverName = serverName;
        this.observer = observer;
        this.connections = connections;
        this.idleMs = idleMs;
        this.clock = clock;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        admitted = connections.tryAcquire();
        if (!admitted) {
            String why = connections.refusal();
            LOG.warn(
                    "{}: refusing connection from {}: {}",
                    serverName,
                    ctx.channel().remoteAddress(),
                    why);
            ctx.writeAndFlush(new RpcFailure(RpcFailure.CONNECTION_ERROR, StatusCode.RETRY_LATER, why))
                    .addListener(ChannelFutureListener.CLOSE);
            return;
        }
        observer.connectionOpened();
        rpcHandler.channelActive(ctx.channel());
        super.channelActive(ctx);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            Channel ch = ctx.channel();
            boolean first = ((IdleStateEvent) evt).isFirst();
            boolean owed = outstanding.get() > 0;
            boolean wasOwed = !first && owedAtLastIdleReport;
            boolean wasRead = !first && readAtLastIdleReport;
            owedAtLastIdleReport = owed;
            readAtLastIdleReport = false;
            // Reports come every timeout while there is no traffic: close only after a whole timeout owing nothing.
            if (!admitted || owed || wasOwed) return;
            if (!ch.config().isAutoRead() && !wasRead) {
                // Paused by the server: a peer with data waiting shows it now (traffic restarts the timer).
                readAtLastIdleReport = true;
                ctx.read();
                return;
            }
            LOG.info(
                    "{}: closing connection from {}: idle for {} ms ({})",
                    serverName,
                    ch.remoteAddress(),
                    idleMs,
                    NetworkConfig.IDLE_TIMEOUT.key());
            ctx.writeAndFlush(new RpcFailure(
                            RpcFailure.CONNECTION_ERROR,
                            StatusCode.RETRY_LATER,
                            serverName
                                    + " closed the connection after " + idleMs + " ms without traffic ("
                                    + NetworkConfig.IDLE_TIMEOUT.key()
                                    + ")"))
                    .addListener(ChannelFutureListener.CLOSE);
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        Channel ch = ctx.channel();
        Message m = (Message) msg;
        if (!admitted) { // refused: it is being closed
            if (m.body() != null) m.body().release();
            return;
        }
        switch (m.type()) {
            case RPC_REQUEST: {
                RpcRequest r = (RpcRequest) m;
                ByteBuf body = ((NettyManagedBuffer) r.body()).buf();
                ResponseCallback callback = callback(ch, r.requestId);
                try {
                    rpcHandler.receive(ch, body, callback);
                } catch (RuntimeException e) {
                    LOG.warn("{}: request {} from {} failed", serverName, r.requestId, ch.remoteAddress(), e);
                    callback.onFailure(StatusCode.FATAL, String.valueOf(e.getMessage()));
                } finally {
                    body.release();
                }
                break;
            }
            case PUSH_DATA: {
                PushData p = (PushData) m;
                rpcHandler.receivePush(
                        ch, p, pushCallback(ch, p.requestId, p.body().size()));
                break;
            }
            case PUSH_MERGED_DATA: {
                PushMergedData p = (PushMergedData) m;
                rpcHandler.receivePushMerged(
                        ch, p, pushCallback(ch, p.requestId, p.body().size()));
                break;
            }
            case CHUNK_FETCH_REQUEST:
                fetch(ch, (ChunkFetchRequest) m);
                break;
            case STREAM_CLOSE: {
                StreamManager streams = rpcHandler.streamManager();
                if (streams != null) streams.closeStream(ch, ((StreamClose) m).streamId);
                break;
            }
            case ONE_WAY: {
                ByteBuf body = ((NettyManagedBuffer) m.body()).buf();
                try {
                    rpcHandler.receiveOneWay(ch, body);
                } finally {
                    body.release();
                }
                break;
            }
            default:
                if (m.body() != null) m.body().release();
                throw new ProtocolException("a client may not send " + m.type() + " to " + serverName);
        }
    }

    private void fetch(Channel ch, ChunkFetchRequest r) {
        long t0 = clock.nanos();
        outstanding.incrementAndGet();
        AtomicBoolean answered = new AtomicBoolean();
        StreamManager streams = rpcHandler.streamManager();
        CompletableFuture<ManagedBuffer> opened;
        try {
            if (streams == null) throw new IllegalStateException(serverName + " serves no chunk fetches");
            opened = streams.getChunkAsync(ch, r.streamId, r.chunkIndex);
        } catch (RuntimeException e) {
            opened = new CompletableFuture<>();
            opened.completeExceptionally(e);
        }
        // The chunk may be opened on the stream manager's own threads (file I/O never runs on this network thread).
        opened.whenComplete((chunk, e) -> {
            if (e != null) {
                Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                StatusCode status = ResponseCallback.statusOf(cause);
                observer.requestFailed(status);
                answer(
                        ch,
                        new ChunkFetchFailure(r.streamId, r.chunkIndex, status, String.valueOf(cause.getMessage())),
                        answered);
                return;
            }
            long bytes = chunk.size();
            answer(ch, new ChunkFetchSuccess(r.streamId, r.chunkIndex, chunk), answered)
                    .addListener(f -> {
                        long nanos = clock.nanos() - t0;
                        streams.chunkSent(r.streamId, r.chunkIndex, nanos, f.isSuccess());
                        if (f.isSuccess()) observer.chunkSent(bytes, nanos);
                        if (!f.isSuccess())
                            LOG.warn(
                                    "{}: sending chunk {} of stream {} to {} failed: {}",
                                    serverName,
                                    r.chunkIndex,
                                    r.streamId,
                                    ch.remoteAddress(),
                                    f.cause().toString());
                    });
        });
    }

    /**
     * Writes the answer to an outstanding request; the request stops counting as outstanding once its first answer
     * is written (or fails to be), so a handler that answers twice does not count twice.
     *
     * <p>An answer that cannot be written (the JVM out of direct memory for the socket's copy of it, say) closes the
     * connection: its client would otherwise wait out its whole timeout for an answer that is never coming (a push
     * four minutes), while a closed connection fails its requests at once and the client retries or moves on.
     */
    private ChannelFuture answer(Channel ch, Message answer, AtomicBoolean answered) {
        ChannelFuture f = ch.writeAndFlush(answer);
        f.addListener(done -> {
            if (answered.compareAndSet(false, true)) outstanding.decrementAndGet();
            if (!done.isSuccess() && ch.isActive()) {
                LOG.warn(
                        "{}: closing connection from {}: an answer could not be written ({})",
                        serverName,
                        ch.remoteAddress(),
                        done.cause().toString());
                ch.close();
            }
        });
        return f;
    }

    private ResponseCallback callback(Channel ch, long requestId) {
        outstanding.incrementAndGet();
        AtomicBoolean answered = new AtomicBoolean();
        return new ResponseCallback() {
            @Override
            public void onSuccess(ByteBuf body) {
                answer(
                        ch,
                        new RpcResponse(requestId, new NettyManagedBuffer(body == null ? Unpooled.EMPTY_BUFFER : body)),
                        answered);
            }

            @Override
            public void onFailure(StatusCode status, String error) {
                observer.requestFailed(status);
                answer(ch, new RpcFailure(requestId, status, error), answered);
            }
        };
    }

    /** Answers a push and tells the observer its size, time and status. */
    private ResponseCallback pushCallback(Channel ch, long requestId, long bytes) {
        long t0 = clock.nanos();
        outstanding.incrementAndGet();
        AtomicBoolean answered = new AtomicBoolean();
        return new ResponseCallback() {
            @Override
            public void onSuccess(ByteBuf body) {
                observer.pushAnswered(bytes, clock.nanos() - t0, StatusCode.OK);
                answer(
                        ch,
                        new RpcResponse(requestId, new NettyManagedBuffer(body == null ? Unpooled.EMPTY_BUFFER : body)),
                        answered);
            }

            @Override
            public void onFailure(StatusCode status, String error) {
                observer.pushAnswered(bytes, clock.nanos() - t0, status);
                answer(ch, new RpcFailure(requestId, status, error), answered);
            }
        };
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (!admitted) return; // refused: the handler never heard of it
        admitted = false;
        connections.release();
        observer.connectionClosed();
        rpcHandler.channelInactive(ctx.channel());
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        FatalErrors.check(cause); // halts a server process on an out-of-heap or other VM error; returns otherwise
        Throwable c = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (c instanceof ProtocolException) {
            // Tell the peer why before closing, so its error names the cause instead of "connection reset".
            LOG.warn(
                    "{}: closing connection from {}: {}",
                    serverName,
                    ctx.channel().remoteAddress(),
                    c.getMessage());
            ctx.writeAndFlush(new RpcFailure(RpcFailure.CONNECTION_ERROR, StatusCode.BAD_REQUEST, c.getMessage()))
                    .addListener(ChannelFutureListener.CLOSE);
        } else {
            LOG.warn(
                    "{}: closing connection from {} after an error: {}",
                    serverName,
                    ctx.channel().remoteAddress(),
                    c.toString());
            ctx.close();
        }
    }
}
