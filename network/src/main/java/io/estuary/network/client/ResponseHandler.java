package io.estuary.network.client;

import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.protocol.ChunkFetchFailure;
import io.estuary.network.protocol.ChunkFetchSuccess;
import io.estuary.network.protocol.Message;
import io.estuary.network.protocol.RpcFailure;
import io.estuary.network.protocol.RpcResponse;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Client side of a connection: matches answers to the requests still waiting for them. */
final class ResponseHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(ResponseHandler.class);

    private final String remote;
    private final Map<Long, CompletableFuture<ByteBuf>> pendingRpcs = new ConcurrentHashMap<>();
    private final Map<String, ChunkReceivedCallback> pendingChunks = new ConcurrentHashMap<>();
    private volatile String closedReason;

    ResponseHandler(String remote) {
        this.remote = remote;
    }

    /** Registers a request; a request made after the connection closed fails at once. */
    void addRpc(long requestId, CompletableFuture<ByteBuf> future) {
        pendingRpcs.put(requestId, future);
        if (closedReason != null && pendingRpcs.remove(requestId) != null) {
            future.completeExceptionally(RemoteException.noAnswer(closedReason, null));
        }
    }

    /** Whether the server announced it closes this connection, or it closed or failed. */
    boolean closing() {
        return closedReason != null;
    }

    void removeRpc(long requestId) {
        pendingRpcs.remove(requestId);
    }

    void addChunk(long streamId, int chunkIndex, ChunkReceivedCallback cb) {
        pendingChunks.put(streamId + "/" + chunkIndex, cb);
        if (closedReason != null && pendingChunks.remove(streamId + "/" + chunkIndex) != null) {
            cb.onFailure(chunkIndex, RemoteException.noAnswer(closedReason, null));
        }
    }

    ChunkReceivedCallback removeChunk(long streamId, int chunkIndex) {
        return pendingChunks.remove(streamId + "/" + chunkIndex);
    }

    int outstanding() {
        return pendingRpcs.size() + pendingChunks.size();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        Message m = (Message) msg;
        switch (m.type()) {
            case RPC_RESPONSE: {
                RpcResponse r = (RpcResponse) m;
                CompletableFuture<ByteBuf> f = pendingRpcs.remove(r.requestId);
                ByteBuf body = r.body() == null ? Unpooled.EMPTY_BUFFER : ((NettyManagedBuffer) r.body()).buf();
                if (f == null || !f.complete(body)) {
                    body.release(); // timed out already, or nobody waits for it
                }
                break;
            }
            case RPC_FAILURE: {
                RpcFailure r = (RpcFailure) m;
                if (r.requestId == RpcFailure.CONNECTION_ERROR) {
                    failAll(remote + " closed the connection: " + r.error);
                } else {
                    CompletableFuture<ByteBuf> f = pendingRpcs.remove(r.requestId);
                    if (f != null) f.completeExceptionally(new RemoteException(r.status, r.error, null));
                }
                break;
            }
            case CHUNK_FETCH_SUCCESS: {
                ChunkFetchSuccess r = (ChunkFetchSuccess) m;
                ByteBuf body = ((NettyManagedBuffer) r.body()).buf();
                ChunkReceivedCallback cb = removeChunk(r.streamId, r.chunkIndex);
                if (cb == null) {
                    body.release();
                } else {
                    cb.onSuccess(r.chunkIndex, body);
                }
                break;
            }
            case CHUNK_FETCH_FAILURE: {
                ChunkFetchFailure r = (ChunkFetchFailure) m;
                ChunkReceivedCallback cb = removeChunk(r.streamId, r.chunkIndex);
                if (cb != null) cb.onFailure(r.chunkIndex, new RemoteException(r.status, r.error, null));
                break;
            }
            default:
                LOG.warn("Ignoring unexpected {} from {}", m.type(), remote);
                if (m.body() != null) m.body().release();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        failAll("connection to " + remote + " closed");
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.warn("Connection to {} failed: {}", remote, cause.toString());
        failAll("connection to " + remote + " failed: " + cause);
        ctx.close();
    }

    private void failAll(String reason) {
        if (closedReason == null) closedReason = reason;
        for (Long id : pendingRpcs.keySet()) {
            CompletableFuture<ByteBuf> f = pendingRpcs.remove(id);
            if (f != null) f.completeExceptionally(RemoteException.noAnswer(reason, null));
        }
        for (String key : pendingChunks.keySet()) {
            ChunkReceivedCallback cb = pendingChunks.remove(key);
            if (cb != null)
                cb.onFailure(
                        Integer.parseInt(key.substring(key.indexOf('/') + 1)), RemoteException.noAnswer(reason, null));
        }
    }
}
