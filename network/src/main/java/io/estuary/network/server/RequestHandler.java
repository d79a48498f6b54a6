package io.estuary.network.server;

import io.estuary.common.status.StatusCode;
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
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Server side of one connection: hands each message to the {@link RpcHandler} and writes its answer back, telling
 * the server's {@link TransportObserver} about each answer on the way out.
 */
final class RequestHandler extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(RequestHandler.class);

  private final RpcHandler rpcHandler;
  private final String serverName;
  private final TransportObserver observer;

  RequestHandler(RpcHandler rpcHandler, String serverName, TransportObserver observer) {
    this.rpcHandler = rpcHandler;
    this.serverName = serverName;
    this.observer = observer;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    observer.connectionOpened();
    rpcHandler.channelActive(ctx.channel());
    super.channelActive(ctx);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    Channel ch = ctx.channel();
    Message m = (Message) msg;
    switch (m.type()) {
      case RPC_REQUEST: {
        RpcRequest r = (RpcRequest) m;
        ByteBuf body = ((NettyManagedBuffer) r.body()).buf();
        try {
          rpcHandler.receive(ch, body, callback(ch, r.requestId));
        } catch (RuntimeException e) {
          LOG.warn("{}: request {} from {} failed", serverName, r.requestId, ch.remoteAddress(), e);
          observer.requestFailed(StatusCode.FATAL);
          ch.writeAndFlush(new RpcFailure(r.requestId, StatusCode.FATAL, String.valueOf(e.getMessage())));
        } finally {
          body.release();
        }
        break;
      }
      case PUSH_DATA: {
        PushData p = (PushData) m;
        rpcHandler.receivePush(ch, p, pushCallback(ch, p.requestId, p.body().size()));
        break;
      }
      case PUSH_MERGED_DATA: {
        PushMergedData p = (PushMergedData) m;
        rpcHandler.receivePushMerged(ch, p, pushCallback(ch, p.requestId, p.body().size()));
        break;
      }
      case CHUNK_FETCH_REQUEST:
        fetch(ch, (ChunkFetchRequest) m);
        break;
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
    long t0 = System.nanoTime();
    StreamManager streams = rpcHandler.streamManager();
    CompletableFuture<ManagedBuffer> opened;
    try {
      if (streams == null) throw new IllegalStateException(serverName + " serves no chunk fetches");
      opened = streams.getChunkAsync(r.streamId, r.chunkIndex);
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
        ch.writeAndFlush(new ChunkFetchFailure(r.streamId, r.chunkIndex, status, String.valueOf(cause.getMessage())));
        return;
      }
      long bytes = chunk.size();
      ch.writeAndFlush(new ChunkFetchSuccess(r.streamId, r.chunkIndex, chunk)).addListener(f -> {
        long nanos = System.nanoTime() - t0;
        streams.chunkSent(r.streamId, r.chunkIndex, nanos, f.isSuccess());
        if (f.isSuccess()) observer.chunkSent(bytes, nanos);
        if (!f.isSuccess()) LOG.warn("{}: sending chunk {} of stream {} to {} failed: {}", serverName, r.chunkIndex,
            r.streamId, ch.remoteAddress(), f.cause().toString());
      });
    });
  }

  private ResponseCallback callback(Channel ch, long requestId) {
    return new ResponseCallback() {
      @Override
      public void onSuccess(ByteBuf body) {
        ch.writeAndFlush(new RpcResponse(requestId, new NettyManagedBuffer(body == null ? Unpooled.EMPTY_BUFFER : body)));
      }

      @Override
      public void onFailure(StatusCode status, String error) {
        observer.requestFailed(status);
        ch.writeAndFlush(new RpcFailure(requestId, status, error));
      }
    };
  }

  /** Answers a push and tells the observer its size, time and status. */
  private ResponseCallback pushCallback(Channel ch, long requestId, long bytes) {
    long t0 = System.nanoTime();
    return new ResponseCallback() {
      @Override
      public void onSuccess(ByteBuf body) {
        observer.pushAnswered(bytes, System.nanoTime() - t0, StatusCode.OK);
        ch.writeAndFlush(new RpcResponse(requestId, new NettyManagedBuffer(body == null ? Unpooled.EMPTY_BUFFER : body)));
      }

      @Override
      public void onFailure(StatusCode status, String error) {
        observer.pushAnswered(bytes, System.nanoTime() - t0, status);
        ch.writeAndFlush(new RpcFailure(requestId, status, error));
      }
    };
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    observer.connectionClosed();
    rpcHandler.channelInactive(ctx.channel());
    super.channelInactive(ctx);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    Throwable c = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
    if (c instanceof ProtocolException) {
      // Tell the peer why before closing, so its error names the cause instead of "connection reset".
      LOG.warn("{}: closing connection from {}: {}", serverName, ctx.channel().remoteAddress(), c.getMessage());
      ctx.writeAndFlush(new RpcFailure(RpcFailure.CONNECTION_ERROR, StatusCode.BAD_REQUEST, c.getMessage()))
          .addListener(ChannelFutureListener.CLOSE);
    } else {
      LOG.warn("{}: closing connection from {} after an error: {}", serverName, ctx.channel().remoteAddress(),
          c.toString());
      ctx.close();
    }
  }
}
