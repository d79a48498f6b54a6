package io.estuary.client.write;

import io.estuary.client.ShuffleClient;
import io.estuary.client.ShuffleSpec;
import io.estuary.client.batch.BatchCodec;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.util.EstuaryException;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The output of one map attempt. Serialized records are buffered per partition; a full buffer becomes a batch
 * (header + compressed records) pushed to that partition's worker. At the end, the partial buffers bound for one
 * worker go out together in merged pushes, every push is awaited, and the driver is told the attempt ended.
 */
public final class MapOutputWriter {
  private static final Logger LOG = LoggerFactory.getLogger(MapOutputWriter.class);

  private final ShuffleClient client;
  private final ShuffleSpec spec;
  private final int mapId;
  private final int attemptId;
  private final BatchCodec codec;
  private final int bufferSize;
  private final long mergedSize;
  private final int retries;
  private final long retryWaitMs;
  private final long awaitMs;
  private final PushTracker tracker;
  private final String shuffleKey;

  private final byte[][] buffers;
  private final int[] fill;
  private final long[] partitionBytes;
  private int nextBatchId;
  private List<PartitionLocation> locations;
  private volatile boolean aborted;

  public MapOutputWriter(ShuffleClient client, ShuffleSpec spec, int mapId, int attemptId) {
    EstuaryConf conf = client.conf();
    this.client = client;
    this.spec = spec;
    this.mapId = mapId;
    this.attemptId = attemptId;
    this.codec = new BatchCodec(conf.get(ClientConfig.COMPRESSION_CODEC));
    this.bufferSize = (int) (long) conf.get(ClientConfig.PUSH_BUFFER_SIZE);
    this.mergedSize = conf.get(ClientConfig.PUSH_MERGED_SIZE);
    this.retries = conf.get(ClientConfig.PUSH_RETRIES);
    this.retryWaitMs = conf.get(ClientConfig.PUSH_RETRY_WAIT);
    this.awaitMs = conf.get(NetworkConfig.RPC_TIMEOUT) * (retries + 2);
    this.tracker = new PushTracker(conf.get(ClientConfig.PUSH_MAX_BYTES_IN_FLIGHT));
    this.shuffleKey = io.estuary.common.util.ShuffleKey.of(spec.appId, spec.shuffleId);
    this.buffers = new byte[spec.numPartitions][];
    this.fill = new int[spec.numPartitions];
    this.partitionBytes = new long[spec.numPartitions];
  }

  /** Adds serialized records (whole records only) for a partition. */
  public void write(int partition, byte[] data, int offset, int length) {
    if (fill[partition] > 0 && fill[partition] + length > bufferSize) pushPartition(partition);
    byte[] buf = buffers[partition];
    int need = fill[partition] + length;
    if (buf == null || buf.length < need) {
      int cap = Math.max(need, Math.min(bufferSize, Math.max(1024, buf == null ? 0 : buf.length * 2)));
      byte[] grown = new byte[cap];
      if (buf != null) System.arraycopy(buf, 0, grown, 0, fill[partition]);
      buffers[partition] = buf = grown;
    }
    System.arraycopy(data, offset, buf, fill[partition], length);
    fill[partition] = need;
    if (need >= bufferSize) pushPartition(partition);
  }

  private PartitionLocation location(int partition) {
    if (locations == null) locations = client.locations(spec);
    return locations.get(partition);
  }

  private ByteBuf takeBatch(int partition) {
    ByteBuf batch = codec.encode(mapId, attemptId, nextBatchId++, buffers[partition], 0, fill[partition]);
    fill[partition] = 0;
    if (buffers[partition].length > bufferSize) buffers[partition] = null; // do not keep a huge record's buffer
    partitionBytes[partition] += batch.readableBytes();
    return batch;
  }

  private void pushPartition(int partition) {
    location(partition); // register the shuffle before encoding, so a failure leaves no batch to release
    pushBatch(partition, takeBatch(partition));
  }

  /**
   * Pushes {@code data} as a batch of its own, after whatever the partition had buffered. For serializers whose
   * streams cannot be concatenated: each batch then holds exactly one serialization stream.
   */
  public void writeBatch(int partition, byte[] data, int offset, int length) {
    if (fill[partition] > 0) pushPartition(partition);
    ByteBuf batch = codec.encode(mapId, attemptId, nextBatchId++, data, offset, length);
    partitionBytes[partition] += batch.readableBytes();
    pushBatch(partition, batch);
  }

  private void pushBatch(int partition, ByteBuf batch) {
    PartitionLocation loc;
    try {
      loc = location(partition);
      tracker.acquire(batch.readableBytes());
    } catch (RuntimeException e) {
      batch.release();
      throw e;
    }
    send(new Push(loc.getWorker(), new int[] {partition}, new int[] {loc.getEpoch()}, new int[] {0}, batch, false), 0);
  }

  /**
   * Pushes what is buffered, waits until every push is acknowledged and tells the driver this attempt ended.
   * Returns the bytes written per partition.
   */
  public long[] finish() throws RemoteException {
    pushRemainderMerged();
    tracker.awaitAll(awaitMs);
    client.mapperEnd(spec, mapId, attemptId);
    return partitionBytes.clone();
  }

  private void pushRemainderMerged() {
    Map<String, List<Integer>> byWorker = new LinkedHashMap<>();
    Map<String, WorkerAddress> workers = new LinkedHashMap<>();
    for (int p = 0; p < fill.length; p++) {
      if (fill[p] == 0) continue;
      WorkerAddress w = location(p).getWorker();
      String id = w.getHost() + ":" + w.getPushPort();
      byWorker.computeIfAbsent(id, k -> new ArrayList<>()).add(p);
      workers.put(id, w);
    }
    for (Map.Entry<String, List<Integer>> e : byWorker.entrySet()) {
      List<ByteBuf> batches = new ArrayList<>();
      List<Integer> parts = new ArrayList<>();
      long size = 0;
      for (int p : e.getValue()) {
        ByteBuf b = takeBatch(p);
        if (size > 0 && size + b.readableBytes() > mergedSize) {
          sendMerged(workers.get(e.getKey()), parts, batches);
          batches = new ArrayList<>();
          parts = new ArrayList<>();
          size = 0;
        }
        batches.add(b);
        parts.add(p);
        size += b.readableBytes();
      }
      if (!batches.isEmpty()) sendMerged(workers.get(e.getKey()), parts, batches);
    }
  }

  /** One push of several partitions' batches; the body is a composite of them, nothing is copied. */
  private void sendMerged(WorkerAddress worker, List<Integer> parts, List<ByteBuf> batches) {
    int n = parts.size();
    int[] ids = new int[n];
    int[] epochs = new int[n];
    int[] offsets = new int[n];
    CompositeByteBuf body = Unpooled.compositeBuffer(Math.max(2, n));
    int pos = 0;
    for (int i = 0; i < n; i++) {
      ids[i] = parts.get(i);
      epochs[i] = location(ids[i]).getEpoch();
      offsets[i] = pos;
      pos += batches.get(i).readableBytes();
      body.addComponent(true, batches.get(i));
    }
    try {
      tracker.acquire(body.readableBytes());
    } catch (RuntimeException e) {
      body.release();
      throw e;
    }
    send(new Push(worker, ids, epochs, offsets, body, n > 1), 0);
  }

  /** One push request, kept (and its body held) until it finally succeeds or fails, so it can be sent again. */
  private final class Push {
    final WorkerAddress worker;
    final int[] partitions;
    final int[] epochs;
    final int[] offsets;
    final ByteBuf body;
    final int size;
    final boolean merged;

    Push(WorkerAddress worker, int[] partitions, int[] epochs, int[] offsets, ByteBuf body, boolean merged) {
      this.worker = worker;
      this.partitions = partitions;
      this.epochs = epochs;
      this.offsets = offsets;
      this.body = body;
      this.size = body.readableBytes();
      this.merged = merged;
    }

    CompletableFuture<ByteBuf> sendOn(TransportClient c) {
      NettyManagedBuffer buf = new NettyManagedBuffer(body.retainedDuplicate()); // the transport releases its copy
      return merged ? c.pushMergedData(shuffleKey, partitions, epochs, offsets, buf)
          : c.pushData(shuffleKey, partitions[0], epochs[0], buf);
    }

    @Override
    public String toString() {
      return size + " bytes of partition" + (partitions.length > 1 ? "s " + partitions.length : " " + partitions[0])
          + " of " + shuffleKey + " (map " + mapId + " attempt " + attemptId + ") to " + worker.getHost() + ":"
          + worker.getPushPort();
    }
  }

  private void send(Push push, int attempt) {
    CompletableFuture<ByteBuf> f;
    try {
      f = push.sendOn(client.pushClient(push.worker));
    } catch (RemoteException | RuntimeException e) {
      f = new CompletableFuture<>();
      f.completeExceptionally(e);
    }
    f.whenComplete((buf, err) -> {
      if (err == null) {
        buf.release();
        push.body.release();
        tracker.succeeded(push.size);
      } else if (attempt < retries && !aborted) {
        long wait = retryWaitMs << attempt;
        LOG.warn("Push of {} failed ({}); retry {} of {} in {} ms", push, err.getMessage(), attempt + 1, retries, wait);
        client.retryTimerSchedule(() -> send(push, attempt + 1), wait);
      } else {
        push.body.release();
        tracker.failed(push.size, new EstuaryException("push of " + push + " failed after " + (attempt + 1)
            + " tries: " + err.getMessage(), err));
      }
    });
  }

  /** Stops retrying; data already pushed by this attempt is ignored by readers since the attempt never ends. */
  public void abort() {
    aborted = true;
  }

}
