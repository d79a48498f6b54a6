package io.estuary.worker.push;

import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.protocol.PushData;
import io.estuary.network.protocol.PushMergedData;
import io.estuary.network.server.ResponseCallback;
import io.estuary.network.server.RpcHandler;
import io.estuary.worker.PartitionRegistry;
import io.estuary.worker.storage.MemoryTracker;
import io.estuary.worker.storage.PartitionFileWriter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;

/**
 * The push path: appends pushed batches to their partition's writer. Runs on Netty threads and never blocks: the
 * data is handed to the writer's in-memory buffer and flushed by the disk's own threads.
 */
public final class PushHandler implements RpcHandler {
  /** Prefix of the error that tells clients to back off and retry rather than fail. */
  public static final String BUSY = "worker busy: ";

  private final PartitionRegistry registry;
  private final MemoryTracker memory;

  public PushHandler(PartitionRegistry registry, MemoryTracker memory) {
    this.registry = registry;
    this.memory = memory;
  }

  @Override
  public void receive(Channel channel, ByteBuf body, ResponseCallback callback) {
    callback.onFailure("the push port takes only pushed data; send control requests to the worker's rpc port");
  }

  @Override
  public void receivePush(Channel channel, PushData push, ResponseCallback callback) {
    ByteBuf body = ((NettyManagedBuffer) push.body()).buf();
    PartitionFileWriter w = registry.writer(push.shuffleKey, push.partitionId, push.epoch);
    String refusal = w == null ? unknown(push.shuffleKey, push.partitionId, push.epoch) : busy();
    if (refusal != null) {
      body.release();
      callback.onFailure(refusal);
      return;
    }
    try {
      w.append(body);
    } catch (RuntimeException e) {
      callback.onFailure(e.getMessage());
      return;
    }
    callback.onSuccess(Unpooled.EMPTY_BUFFER);
  }

  @Override
  public void receivePushMerged(Channel channel, PushMergedData push, ResponseCallback callback) {
    ByteBuf body = ((NettyManagedBuffer) push.body()).buf();
    try {
      int n = push.partitionIds.length;
      PartitionFileWriter[] writers = new PartitionFileWriter[n];
      // Check every location before appending any, so a refused push leaves nothing half-written.
      for (int i = 0; i < n; i++) {
        writers[i] = registry.writer(push.shuffleKey, push.partitionIds[i], push.epochs[i]);
        if (writers[i] == null) {
          callback.onFailure(unknown(push.shuffleKey, push.partitionIds[i], push.epochs[i]));
          return;
        }
      }
      String busy = busy();
      if (busy != null) {
        callback.onFailure(busy);
        return;
      }
      int bodyLen = body.readableBytes();
      for (int i = 0; i < n; i++) {
        int start = push.offsets[i];
        int end = i + 1 < n ? push.offsets[i + 1] : bodyLen;
        writers[i].append(body.retainedSlice(body.readerIndex() + start, end - start));
      }
      callback.onSuccess(Unpooled.EMPTY_BUFFER);
    } catch (RuntimeException e) {
      callback.onFailure(e.getMessage());
    } finally {
      body.release();
    }
  }

  private String busy() {
    if (!memory.overLimit()) return null;
    return BUSY + memory.held() + " bytes wait to be flushed, over estuary.worker.memory.maxBuffered ("
        + memory.limit() + "); retry later";
  }

  private static String unknown(String shuffleKey, int partition, int epoch) {
    return "unknown location: partition " + partition + " epoch " + epoch + " of shuffle " + shuffleKey
        + " is not reserved on this worker (unknown application or shuffle, expired, or the worker restarted)";
  }
}
