package io.estuary.network.client;

import io.estuary.network.buffer.ManagedBuffer;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.protocol.ChunkFetchRequest;
import io.estuary.network.protocol.Message;
import io.estuary.network.protocol.OneWayMessage;
import io.estuary.network.protocol.PushData;
import io.estuary.network.protocol.PushMergedData;
import io.estuary.network.protocol.RpcRequest;
import io.estuary.network.protocol.StreamClose;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import java.io.Closeable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One connection to a server. Every request has a timeout: a request without an answer in time fails with a
 * message naming the server and the wait.
 */
public final class TransportClient implements Closeable {
    private static final AtomicLong NEXT_REQUEST_ID = new AtomicLong(1);

    private final Channel channel;
    private final ResponseHandler handler;
    private final long timeoutMs;
    private final String remote;
    private final int protocolVersion;

    TransportClient(Channel channel, ResponseHandler handler, long timeoutMs, String remote, int protocolVersion) {
        this.protocolVersion = protocolVersion;
        this.channel = channel;
        this.handler = handler;
        this.timeoutMs = timeoutMs;
        this.remote = remote;
    }

    public static long nextRequestId() {
        return NEXT_REQUEST_ID.getAndIncrement();
    }

    /**
     * Open, and not announced closing by the server (an idle close, a refusal): a pool then opens another connection
     * instead of sending on one whose every request would fail at once.
     */
    public boolean isActive() {
        return channel.isActive() && !handler.closing();
    }

    public String remoteAddress() {
        return remote;
    }

    /** The protocol version this connection agreed on in its handshake. */
    public int protocolVersion() {
        return protocolVersion;
    }

    /** Sends a request; the future gets the response body (the caller releases it) or the failure. */
    public CompletableFuture<ByteBuf> sendRpc(ByteBuf body) {
        return sendRpc(body, timeoutMs);
    }

    /**
     * As {@link #sendRpc(ByteBuf)}, waiting {@code timeoutMs} for the answer instead of the connection's timeout: for
     * a request the server answers only once some longer wait of its own is over (e.g. a commit).
     */
    public CompletableFuture<ByteBuf> sendRpc(ByteBuf body, long timeoutMs) {
        long id = nextRequestId();
        return send(id, new RpcRequest(id, new NettyManagedBuffer(body)), timeoutMs);
    }

    /** Sends a request and waits for its answer. */
    public ByteBuf sendRpcSync(ByteBuf body) throws RemoteException {
        return await(sendRpc(body));
    }

    /** Pushes one partition's batches; completes when the worker has taken them. */
    public CompletableFuture<ByteBuf> pushData(String shuffleKey, int partitionId, int epoch, ManagedBuffer body) {
        long id = nextRequestId();
        return send(id, new PushData(id, shuffleKey, partitionId, epoch, body));
    }

    public CompletableFuture<ByteBuf> pushMergedData(
            String shuffleKey, int[] partitionIds, int[] epochs, int[] offsets, ManagedBuffer body) {
        return pushMergedData(shuffleKey, partitionIds, epochs, offsets, body, timeoutMs);
    }

    /** As {@link #pushData(String, int, int, ManagedBuffer)}, waiting {@code timeoutMs} for the answer. */
    public CompletableFuture<ByteBuf> pushData(
            String shuffleKey, int partitionId, int epoch, ManagedBuffer body, long timeoutMs) {
        long id = nextRequestId();
        return send(id, new PushData(id, shuffleKey, partitionId, epoch, body), timeoutMs);
    }

    /** As {@link #pushMergedData(String, int[], int[], int[], ManagedBuffer)}, waiting {@code timeoutMs}. */
    public CompletableFuture<ByteBuf> pushMergedData(
            String shuffleKey, int[] partitionIds, int[] epochs, int[] offsets, ManagedBuffer body, long timeoutMs) {
        long id = nextRequestId();
        return send(id, new PushMergedData(id, shuffleKey, partitionIds, epochs, offsets, body), timeoutMs);
    }

    public void send(ByteBuf oneWay) {
        channel.writeAndFlush(new OneWayMessage(new NettyManagedBuffer(oneWay)));
    }

    /** Sends any message and tracks the answer under {@code requestId}. Exposed for protocol tests. */
    public CompletableFuture<ByteBuf> send(long requestId, Message msg) {
        return send(requestId, msg, timeoutMs);
    }

    private CompletableFuture<ByteBuf> send(long requestId, Message msg, long timeoutMs) {
        CompletableFuture<ByteBuf> f = new CompletableFuture<>();
        handler.addRpc(requestId, f);
        channel.writeAndFlush(msg).addListener(w -> {
            if (!w.isSuccess()) {
                msg.releaseBody(); // a no-op when the encoder already handed the body over
                handler.removeRpc(requestId);
                f.completeExceptionally(
                        RemoteException.noAnswer("failed to send to " + remote + ": " + w.cause(), w.cause()));
            }
        });
        ScheduledFuture<?> timeout = channel.eventLoop()
                .schedule(
                        () -> {
                            if (!f.isDone()) {
                                handler.removeRpc(requestId);
                                f.completeExceptionally(RemoteException.noAnswer(
                                        "no answer from " + remote + " within " + timeoutMs + " ms"
                                                + (timeoutMs == this.timeoutMs ? " (estuary.network.rpc.timeout)" : "")
                                                + unsent(),
                                        null));
                            }
                        },
                        timeoutMs,
                        TimeUnit.MILLISECONDS);
        f.whenComplete((r, e) -> timeout.cancel(false)); // answered requests must not pile up as timer tasks
        return f;
    }

    /**
     * What this connection has not yet handed to the socket, for a timeout's message: whether a request's bytes ever
     * left this process tells a server that did not answer from a write that never happened. Called on the event loop.
     */
    private String unsent() {
        ChannelOutboundBuffer out = channel.unsafe().outboundBuffer();
        if (out == null || out.totalPendingWriteBytes() == 0) return "";
        return "; " + out.totalPendingWriteBytes() + " bytes in " + out.size() + " messages were still unsent on the "
                + "connection (writable: " + channel.isWritable() + ", active: " + channel.isActive() + ")";
    }

    public void fetchChunk(long streamId, int chunkIndex, ChunkReceivedCallback callback) {
        ScheduledFuture<?>[] timeout = new ScheduledFuture<?>[1];
        ChunkReceivedCallback cancelling = new ChunkReceivedCallback() {
            @Override
            public void onSuccess(int index, ByteBuf chunk) {
                if (timeout[0] != null) timeout[0].cancel(false);
                callback.onSuccess(index, chunk);
            }

            @Override
            public void onFailure(int index, Throwable cause) {
                if (timeout[0] != null) timeout[0].cancel(false);
                callback.onFailure(index, cause);
            }
        };
        timeout[0] = scheduleChunkTimeout(streamId, chunkIndex);
        handler.addChunk(streamId, chunkIndex, cancelling);
        channel.writeAndFlush(new ChunkFetchRequest(streamId, chunkIndex)).addListener(w -> {
            if (!w.isSuccess()) {
                ChunkReceivedCallback cb = handler.removeChunk(streamId, chunkIndex);
                if (cb != null)
                    cb.onFailure(chunkIndex, RemoteException.noAnswer("failed to send to " + remote, w.cause()));
            }
        });
    }

    /**
     * Tells the server this client is done with a stream before its last chunk, so it drops it now. No answer; nothing
     * happens when the connection is gone (the server dropped the connection's streams with it).
     */
    public void closeStream(long streamId) {
        if (channel.isActive()) channel.writeAndFlush(new StreamClose(streamId));
    }

    private ScheduledFuture<?> scheduleChunkTimeout(long streamId, int chunkIndex) {
        return channel.eventLoop()
                .schedule(
                        () -> {
                            ChunkReceivedCallback cb = handler.removeChunk(streamId, chunkIndex);
                            if (cb != null) {
                                cb.onFailure(
                                        chunkIndex,
                                        RemoteException.noAnswer(
                                                "chunk " + chunkIndex + " of stream " + streamId + " from " + remote
                                                        + " not received within " + timeoutMs
                                                        + " ms (estuary.network.rpc.timeout)",
                                                null));
                            }
                        },
                        timeoutMs,
                        TimeUnit.MILLISECONDS);
    }

    /** Waits for a future from this client, turning failures into RemoteException. */
    public static <T> T await(CompletableFuture<T> f) throws RemoteException {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RemoteException("interrupted while waiting for an answer", e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RemoteException) throw new RemoteException(c.getMessage(), c);
            throw new RemoteException(String.valueOf(c), c);
        }
    }

    public static ByteBuf wrap(byte[] bytes) {
        return Unpooled.wrappedBuffer(bytes);
    }

    @Override
    public void close() {
        channel.close().awaitUninterruptibly(10, TimeUnit.SECONDS);
    }

    @Override
    public String toString() {
        return "TransportClient[" + remote + "]";
    }
}
