package io.estuary.client.write;

import io.estuary.client.ShuffleClient;
import io.estuary.client.ShuffleSpec;
import io.estuary.client.batch.BatchCodec;
import io.estuary.client.batch.BatchHeader;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.PartitionStats;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.common.util.EstuaryException;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.protocol.PushMergedData;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The output of one map attempt. Serialized records are buffered per partition; a full buffer becomes a batch
 * (header + compressed records) pushed to that partition's current location. At the end, the partial buffers bound
 * for one worker go out together in merged pushes, every push is awaited, and the driver is told the attempt ended,
 * with what it wrote to each partition (batches, records, checksum) for readers to verify.
 *
 * <p>A failed push is handled by its {@link StatusCode}: busy is retried after a jittered back-off; a failed
 * location (worker gone, disk failed, hard split, unknown location, replica unreachable) is revived to a new epoch
 * and the push resent there; a stage that already ended means this attempt lost the race and its data is not
 * needed; anything fatal fails the task at once. A push stays in flight until it is finally resolved.
 *
 * <p>Confined to the task's thread, except push completions, which run on Netty or timer threads and touch only the
 * push itself, the {@link PushTracker} and the shared {@link LocationTable}.
 */
public final class MapOutputWriter {
  private static final Logger LOG = LoggerFactory.getLogger(MapOutputWriter.class);
  private static final long MAX_BACKOFF_MS = 10_000;

  private final ShuffleClient client;
  private final ShuffleSpec spec;
  private final int mapId;
  private final int attemptId;
  private final int stageId;
  private final int stageAttempt;
  private final boolean indeterminate;
  private final BatchCodec codec;
  private final int bufferSize;
  private final long mergedSize;
  private final long maxBuffered;
  /** Bytes of partition buffers held now (their capacity: what is really allocated). */
  private long heldBytes;
  private long earlyPushes;
  /** Small whole batches ({@link #writeBatch}) waiting to be pushed together, by worker. */
  private final Map<String, QueuedBatches> queued = new LinkedHashMap<>();
  private final int retries;
  private final long retryWaitMs;
  private final long awaitMs;
  private final long pushTimeoutMs;
  private final PushTracker tracker;
  private final long congestionMaxDelayMs;
  /** How long acknowledged pushes hold their permits while workers say this application pushes too fast. */
  private final java.util.concurrent.atomic.AtomicLong congestionDelayMs = new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong congestedAcks = new java.util.concurrent.atomic.AtomicLong();
  /** Milliseconds acknowledged pushes were held back (their permits kept) because workers said slow down. */
  private final java.util.concurrent.atomic.AtomicLong congestionHeldMs = new java.util.concurrent.atomic.AtomicLong();

  private final byte[][] buffers;
  private final int[] fill;
  private final int[] bufferedRecords;
  private final long[] partitionBytes;
  private final int[] batches;
  private final long[] records;
  private final long[] checksums;
  private int nextBatchId;
  /** Time the task spent handing batches to the network and waiting for them (for the engine's write time). */
  private long writeNanos;
  private LocationTable table;
  private volatile boolean aborted;
  private volatile boolean stageEnded;

  public MapOutputWriter(ShuffleClient client, ShuffleSpec spec, int mapId, int attemptId) {
    this(client, spec, mapId, attemptId, 0, 0, false);
  }

  /**
   * @param stageId the engine's stage this map belongs to (0 for engines without stages); with the attempt it
   *     orders this writer against other attempts of the stage
   * @param stageAttempt the attempt of the stage this map belongs to: a rerun after lost data writes a fresh
   *     generation of the shuffle, and a writer older than the newest generation's attempt is refused
   * @param indeterminate whether the stage's output may differ when it reruns (then a rerun replaces all of it)
   */
  public MapOutputWriter(ShuffleClient client, ShuffleSpec spec, int mapId, int attemptId, int stageId,
      int stageAttempt, boolean indeterminate) {
    EstuaryConf conf = client.conf();
    this.client = client;
    this.spec = spec;
    this.mapId = mapId;
    this.attemptId = attemptId;
    this.stageId = stageId;
    this.stageAttempt = stageAttempt;
    this.indeterminate = indeterminate;
    this.codec = new BatchCodec(conf.get(ClientConfig.COMPRESSION_CODEC));
    this.bufferSize = (int) (long) conf.get(ClientConfig.PUSH_BUFFER_SIZE);
    this.mergedSize = conf.get(ClientConfig.PUSH_MERGED_SIZE);
    this.maxBuffered = conf.get(ClientConfig.PUSH_MAX_BUFFERED);
    this.retries = conf.get(ClientConfig.PUSH_RETRIES);
    this.retryWaitMs = conf.get(ClientConfig.PUSH_RETRY_WAIT);
    // A primary answers a push once its replica has the data, and gives the replica up to its own request timeout:
    // waiting only as long, a writer would often time out together with the primary and blame a live worker for
    // its stopped replica. So a push waits for two request timeouts.
    this.pushTimeoutMs = 2 * conf.get(NetworkConfig.RPC_TIMEOUT);
    this.awaitMs = pushTimeoutMs * (retries + 2) + MAX_BACKOFF_MS * retries;
    this.tracker = new PushTracker(conf.get(ClientConfig.PUSH_MAX_BYTES_IN_FLIGHT));
    this.congestionMaxDelayMs = conf.get(ClientConfig.CONGESTION_MAX_DELAY);
    int n = spec.numPartitions;
    this.buffers = new byte[n][];
    this.fill = new int[n];
    this.bufferedRecords = new int[n];
    this.partitionBytes = new long[n];
    this.batches = new int[n];
    this.records = new long[n];
    this.checksums = new long[n];
  }

  /** Adds one serialized record for a partition. */
  public void write(int partition, byte[] data, int offset, int length) {
    write(partition, data, offset, length, 1);
  }

  /** Adds serialized records (whole records only, {@code count} of them) for a partition. */
  public void write(int partition, byte[] data, int offset, int length, int count) {
    if (fill[partition] > 0 && fill[partition] + length > bufferSize) pushPartition(partition);
    byte[] buf = buffers[partition];
    int need = fill[partition] + length;
    if (buf == null || buf.length < need) {
      int cap = Math.max(need, Math.min(bufferSize, Math.max(1024, buf == null ? 0 : buf.length * 2)));
      byte[] grown = new byte[cap];
      if (buf != null) System.arraycopy(buf, 0, grown, 0, fill[partition]);
      heldBytes += cap - (buf == null ? 0 : buf.length);
      buffers[partition] = buf = grown;
    }
    System.arraycopy(data, offset, buf, fill[partition], length);
    fill[partition] = need;
    bufferedRecords[partition] += count;
    if (need >= bufferSize) {
      pushPartition(partition);
    } else if (heldBytes > maxBuffered) {
      pushBuffered();
    }
  }

  /**
   * Bytes held in partition buffers now. Bounded by {@code estuary.client.push.maxBufferedBytes} plus one record,
   * whatever the number of partitions.
   */
  public long bufferedBytes() {
    return heldBytes;
  }

  /** How often the buffers were pushed before they filled up, to stay within the bound or to give memory back. */
  public long earlyPushes() {
    return earlyPushes;
  }

  /**
   * Pushes every partly filled buffer now (bound for one worker together, as at the end) and frees all buffers;
   * returns the bytes freed. For the memory bound, and for an engine whose memory manager asks for room. Call it
   * between writes, on the task's thread.
   */
  public long pushBuffered() {
    long before = heldBytes;
    long t0 = System.nanoTime();
    sendAllQueued();
    pushRemainderMerged();
    for (int p = 0; p < buffers.length; p++) {
      if (buffers[p] == null) continue;
      heldBytes -= buffers[p].length;
      buffers[p] = null;
    }
    earlyPushes++;
    writeNanos += System.nanoTime() - t0;
    return before - heldBytes;
  }

  private LocationTable table() {
    if (table == null) table = client.register(spec, stageId, stageAttempt, indeterminate);
    return table;
  }

  /** Encodes a batch and counts it in the partition's end-of-map report. */
  private ByteBuf encode(int partition, byte[] data, int offset, int length, int count) {
    ByteBuf batch = codec.encode(mapId, attemptId, nextBatchId++, count, data, offset, length);
    partitionBytes[partition] += batch.readableBytes();
    batches[partition]++;
    records[partition] += count;
    checksums[partition] += BatchHeader.checksum(batch, 0) & 0xffffffffL;
    return batch;
  }

  private ByteBuf takeBatch(int partition) {
    ByteBuf batch = encode(partition, buffers[partition], 0, fill[partition], bufferedRecords[partition]);
    fill[partition] = 0;
    bufferedRecords[partition] = 0;
    if (buffers[partition].length > bufferSize) { // do not keep a huge record's buffer
      heldBytes -= buffers[partition].length;
      buffers[partition] = null;
    }
    return batch;
  }

  private void pushPartition(int partition) {
    long t0 = System.nanoTime();
    table(); // register the shuffle before encoding, so a failure leaves no batch to release
    pushBatch(partition, takeBatch(partition));
    writeNanos += System.nanoTime() - t0;
  }

  /**
   * Pushes {@code data} ({@code count} records) as a batch of its own, after whatever the partition had buffered.
   * For serializers whose streams cannot be concatenated: each batch then holds exactly one serialization stream.
   */
  public void writeBatch(int partition, byte[] data, int offset, int length, int count) {
    if (fill[partition] > 0) pushPartition(partition);
    long t0 = System.nanoTime();
    table();
    ByteBuf batch = encode(partition, data, offset, length, count);
    if (batch.readableBytes() >= bufferSize) {
      pushBatch(partition, batch);
    } else {
      queueSmallBatch(table.get(partition), batch);
    }
    writeNanos += System.nanoTime() - t0;
    if (heldBytes > maxBuffered) pushBuffered();
  }

  /**
   * Small whole batches wait, grouped by the worker of the location they were grouped by, and go out together in
   * merged pushes of up to the merged size: with thousands of partitions, one push per small batch would cost a
   * round trip each. Their bytes count as held.
   */
  private void queueSmallBatch(PartitionLocation loc, ByteBuf batch) {
    String worker = workerKey(loc.getWorker());
    QueuedBatches q = queued.get(worker);
    if (q == null) queued.put(worker, q = new QueuedBatches());
    q.locations.add(loc);
    q.batches.add(batch);
    q.bytes += batch.readableBytes();
    heldBytes += batch.readableBytes();
    if (q.bytes >= mergedSize || q.batches.size() >= PushMergedData.MAX_ENTRIES) sendQueued(worker);
  }

  private void sendQueued(String worker) {
    QueuedBatches q = queued.remove(worker);
    if (q == null) return;
    heldBytes -= q.bytes;
    sendMerged(q.locations, q.batches);
  }

  private void sendAllQueued() {
    for (String worker : new ArrayList<>(queued.keySet())) sendQueued(worker);
  }

  /** Small batches waiting for one worker. */
  private static final class QueuedBatches {
    final List<PartitionLocation> locations = new ArrayList<>();
    final List<ByteBuf> batches = new ArrayList<>();
    long bytes;
  }

  private void pushBatch(int partition, ByteBuf batch) {
    try {
      tracker.acquire(batch.readableBytes());
    } catch (RuntimeException e) {
      batch.release();
      throw e;
    }
    send(Push.single(table.get(partition), batch, null), 0);
  }

  /**
   * Pushes what is buffered, waits until every push is acknowledged and tells the driver this attempt ended.
   * Returns the bytes written per partition.
   */
  public long[] finish() throws RemoteException {
    long t0 = System.nanoTime();
    try {
      return finishNow();
    } finally {
      writeNanos += System.nanoTime() - t0;
    }
  }

  /**
   * Nanoseconds the task spent encoding and pushing batches, waiting for push permits and, in {@link #finish}, for
   * the last acknowledgements and the driver: what an engine reports as shuffle write time.
   */
  public long writeNanos() {
    return writeNanos;
  }

  private long[] finishNow() throws RemoteException {
    sendAllQueued();
    pushRemainderMerged();
    tracker.awaitAll(awaitMs);
    List<PartitionStats> stats = new ArrayList<>();
    for (int p = 0; p < batches.length; p++) {
      if (batches[p] == 0) continue;
      stats.add(PartitionStats.newBuilder().setPartitionId(p).setBatches(batches[p]).setRecords(records[p])
          .setChecksum(checksums[p]).build());
    }
    int winner = client.mapperEnd(spec, table, stageId, stageAttempt, indeterminate, mapId, attemptId, stats);
    if (congestedAcks.get() > 0) {
      LOG.info("Map {} attempt {} of {}: workers said its application pushes too fast {} times; its pushes were held "
          + "back {} ms in all", mapId, attemptId, spec, congestedAcks.get(), congestionHeldMs.get());
    }
    if (winner != attemptId) {
      LOG.info("Map {} attempt {} of {} ended after attempt {}; its output is ignored", mapId, attemptId, spec,
          winner);
    }
    return partitionBytes.clone();
  }

  private void pushRemainderMerged() {
    // table() only when something is buffered: a map that wrote nothing registers nothing.
    for (List<PartitionLocation> parts : remaindersByWorker(fill, p -> table().get(p)).values()) {
      List<ByteBuf> group = new ArrayList<>();
      List<PartitionLocation> locs = new ArrayList<>();
      long size = 0;
      for (PartitionLocation loc : parts) {
        ByteBuf b = takeBatch(loc.getPartitionId());
        if (size > 0 && (size + b.readableBytes() > mergedSize || group.size() >= PushMergedData.MAX_ENTRIES)) {
          try {
            sendMerged(locs, group); // releases the group if it throws (e.g. the task was interrupted)
          } catch (RuntimeException | Error e) {
            b.release(); // taken but in no push yet
            throw e;
          }
          group = new ArrayList<>();
          locs = new ArrayList<>();
          size = 0;
        }
        group.add(b);
        locs.add(loc);
        size += b.readableBytes();
      }
      if (!group.isEmpty()) sendMerged(locs, group);
    }
  }

  /**
   * The location of every partition with buffered data ({@code fill[p] > 0}), grouped by the worker holding its
   * primary, in partition order. Each location is read from {@code where} exactly once: other tasks' revives move
   * partitions in the shared {@link LocationTable} at any moment, and a merged push must carry the very locations
   * it was grouped by. (Reading a partition again after grouping could put a location whose primary is elsewhere
   * into the push; the worker it goes to may hold that epoch as a replica, would take the batch into its replica
   * file, forwarding nothing, and acknowledge it, while readers read the primary: the batch is lost.)
   */
  static Map<String, List<PartitionLocation>> remaindersByWorker(int[] fill, IntFunction<PartitionLocation> where) {
    Map<String, List<PartitionLocation>> byWorker = new LinkedHashMap<>();
    for (int p = 0; p < fill.length; p++) {
      if (fill[p] == 0) continue;
      PartitionLocation loc = where.apply(p);
      byWorker.computeIfAbsent(workerKey(loc.getWorker()), k -> new ArrayList<>()).add(loc);
    }
    return byWorker;
  }

  private static String workerKey(WorkerAddress w) {
    return w.getHost() + ":" + w.getPushPort();
  }

  /** One push of several partitions' batches; the body is a composite of them, nothing is copied. */
  private void sendMerged(List<PartitionLocation> locs, List<ByteBuf> group) {
    String to = workerKey(locs.get(0).getWorker());
    for (PartitionLocation l : locs) {
      // The push goes to the first location's worker: any other primary there would be written as a replica.
      if (!workerKey(l.getWorker()).equals(to)) {
        for (ByteBuf b : group) b.release();
        throw new IllegalStateException("a merged push to " + to + " holds partition " + l.getPartitionId()
            + " epoch " + l.getEpoch() + ", whose primary is on " + workerKey(l.getWorker()));
      }
    }
    if (locs.size() == 1) {
      pushBatch(locs.get(0).getPartitionId(), group.get(0));
      return;
    }
    CompositeByteBuf body = Unpooled.compositeBuffer(Math.max(2, group.size()));
    for (ByteBuf b : group) body.addComponent(true, b);
    try {
      tracker.acquire(body.readableBytes());
    } catch (RuntimeException e) {
      body.release();
      throw e;
    }
    send(Push.merged(locs, group, body), 0);
  }

  /**
   * One push request, kept (and its body held) until it finally succeeds or fails, so it can be sent again. A
   * merged push that fails is split into single pushes, one per partition, each handled on its own; the merged
   * push's permits are returned when the last of them is resolved.
   */
  private static final class Push {
    final PartitionLocation[] locations;
    final int[] offsets;
    final ByteBuf body;
    final int size;
    /** For the single pushes a failed merged push became: the merged push's size and its pushes still open. */
    final int parentSize;
    final AtomicInteger parentOpen;

    private Push(PartitionLocation[] locations, int[] offsets, ByteBuf body, int parentSize, AtomicInteger parentOpen) {
      this.locations = locations;
      this.offsets = offsets;
      this.body = body;
      this.size = body.readableBytes();
      this.parentSize = parentSize;
      this.parentOpen = parentOpen;
    }

    static Push single(PartitionLocation loc, ByteBuf body, Push parent) {
      return new Push(new PartitionLocation[] {loc}, new int[] {0}, body,
          parent == null ? -1 : parent.parentSize < 0 ? parent.size : parent.parentSize,
          parent == null ? null : parent.parentOpen);
    }

    static Push merged(List<PartitionLocation> locs, List<ByteBuf> group, ByteBuf body) {
      int[] offsets = new int[group.size()];
      int pos = 0;
      for (int i = 0; i < offsets.length; i++) {
        offsets[i] = pos;
        pos += group.get(i).readableBytes();
      }
      return new Push(locs.toArray(new PartitionLocation[0]), offsets, body, -1, null);
    }

    boolean isMerged() {
      return locations.length > 1;
    }

    WorkerAddress worker() {
      return locations[0].getWorker();
    }

    int length(int i) {
      return (i + 1 < offsets.length ? offsets[i + 1] : size) - offsets[i];
    }

    CompletableFuture<ByteBuf> sendOn(TransportClient c, String shuffleKey, long timeoutMs) {
      NettyManagedBuffer buf = new NettyManagedBuffer(body.retainedDuplicate()); // the transport releases its copy
      if (!isMerged()) {
        return c.pushData(shuffleKey, locations[0].getPartitionId(), locations[0].getEpoch(), buf, timeoutMs);
      }
      int n = locations.length;
      int[] ids = new int[n];
      int[] epochs = new int[n];
      for (int i = 0; i < n; i++) {
        ids[i] = locations[i].getPartitionId();
        epochs[i] = locations[i].getEpoch();
      }
      return c.pushMergedData(shuffleKey, ids, epochs, offsets, buf, timeoutMs);
    }

    String describe(String shuffleKey, int mapId, int attemptId) {
      PartitionLocation l = locations[0];
      return size + " bytes of " + (isMerged() ? locations.length + " partitions" : "partition " + l.getPartitionId()
          + " epoch " + l.getEpoch()) + " of " + shuffleKey + " (map " + mapId + " attempt " + attemptId + ") to "
          + l.getWorker().getHost() + ":" + l.getWorker().getPushPort();
    }
  }

  private void send(Push push, int attempt) {
    CompletableFuture<ByteBuf> f;
    try {
      f = push.sendOn(client.pushClient(push.worker()), table.shuffleKey(), pushTimeoutMs);
    } catch (RemoteException | RuntimeException e) {
      f = new CompletableFuture<>();
      f.completeExceptionally(e);
    }
    f.whenComplete((ack, err) -> {
      if (err == null) {
        acknowledged(push, ack);
      } else {
        failed(push, attempt, err);
      }
    });
  }

  private void acknowledged(Push push, ByteBuf ack) {
    boolean congested = false;
    try {
      // The ack carries one status byte per partition when a partition file passed its soft split size or the
      // worker finds this application pushing faster than its share.
      for (int i = 0; i < ack.readableBytes() && i < push.locations.length; i++) {
        StatusCode s = StatusCode.of(ack.getByte(ack.readerIndex() + i));
        if (s == StatusCode.CONGESTED) congested = true;
        if (s != StatusCode.SOFT_SPLIT) continue;
        PartitionLocation loc = push.locations[i];
        if (table.claimSplit(loc.getPartitionId(), loc.getEpoch())) {
          client.revive(spec, table, loc.getPartitionId(), loc.getEpoch(), null, true);
        }
      }
    } finally {
      ack.release();
    }
    if (!congested || congestionMaxDelayMs == 0) {
      congestionDelayMs.set(0);
      resolved(push, null);
      return;
    }
    // Slow down: this push keeps its permits a while, so the task's next pushes wait; longer while it lasts.
    congestedAcks.incrementAndGet();
    long delay = congestionDelayMs.updateAndGet(d -> Math.min(congestionMaxDelayMs, Math.max(50, d * 2)));
    congestionHeldMs.addAndGet(delay);
    Runnable release = () -> resolved(push, null);
    client.retryTimerSchedule(release, delay, release); // acknowledged: a closing client releases it at once
  }

  /**
   * Runs {@code retry} of {@code push} after {@code delayMs}; if the client closes first, the push is settled as
   * failed instead, so its buffer is released and a task waiting for its pushes fails at once rather than time out.
   */
  private void retryLater(Push push, Runnable retry, long delayMs) {
    client.retryTimerSchedule(retry, delayMs, () -> resolved(push, new EstuaryException("push of "
        + push.describe(table.shuffleKey(), mapId, attemptId) + " abandoned: the shuffle client closed")));
  }

  /** Acknowledgements that told this writer to slow down. */
  public long congestedAcks() {
    return congestedAcks.get();
  }

  /**
   * Milliseconds, summed over pushes, that acknowledged pushes held their permits back because a worker said this
   * application pushes too fast (pushes held at the same time each count). Logged at the end of a map that was
   * held back.
   */
  public long congestionHeldMs() {
    return congestionHeldMs.get();
  }

  /** The push is settled for good: return its permits (or its parent's, with its last sibling). */
  private void resolved(Push push, Throwable failure) {
    push.body.release();
    int permits = push.size;
    if (push.parentOpen != null) {
      if (push.parentOpen.decrementAndGet() > 0) {
        if (failure != null) tracker.recordFailure(failure);
        return;
      }
      permits = push.parentSize;
    }
    if (failure == null) tracker.succeeded(permits);
    else tracker.failed(permits, failure);
  }

  private void failed(Push push, int attempt, Throwable err) {
    StatusCode status = RemoteException.statusOf(err);
    String what = push.describe(table.shuffleKey(), mapId, attemptId);
    if (status == StatusCode.STAGE_ENDED) {
      // Only an attempt that lost the race still pushes once the stage committed: nothing of it is read.
      stageEnded = true;
      resolved(push, null);
      return;
    }
    if (aborted) {
      resolved(push, new EstuaryException("push of " + what + " abandoned: the task was aborted"));
      return;
    }
    if (!status.isRetryable() || attempt >= retries) {
      resolved(push, new EstuaryException("push of " + what + " failed after " + (attempt + 1) + " tries ("
          + status + "): " + err.getMessage(), err));
      return;
    }
    if (push.isMerged()) {
      splitMerged(push, attempt, status, err);
      return;
    }
    PartitionLocation loc = push.locations[0];
    if (status.needsRevive()) {
      // Only a worker this client could not reach is blamed. A primary that could not replicate does not say which
      // replica failed; a dead replica shows itself when the driver reserves the new epoch's copies on it.
      WorkerAddress failedWorker = status == StatusCode.CONNECTION_FAILED ? loc.getWorker() : null;
      if (table.claimFailureLog(loc.getPartitionId(), loc.getEpoch())) {
        LOG.warn("Push of {} failed ({}: {}); moving partition {} to a new location", what, status,
            err.getMessage(), loc.getPartitionId());
      }
      client.revive(spec, table, loc.getPartitionId(), loc.getEpoch(), failedWorker, false).whenComplete((n, e) -> {
        if (e != null && RemoteException.statusOf(e) == StatusCode.STAGE_ENDED) {
          // The driver already commits this shuffle (another attempt of this map ended first): nothing of this
          // attempt is read, so it ends quietly, as when a push says so.
          stageEnded = true;
          resolved(push, null);
        } else if (e != null) {
          LOG.warn("Reviving partition {} of {} failed: {}", loc.getPartitionId(), table.shuffleKey(), e.toString());
          // The driver could not answer now: wait like a busy worker, then try the whole thing again.
          retryLater(push, () -> failed(push, attempt + 1, err), backoff(attempt));
        } else {
          retryLater(push, () -> send(Push.single(n, push.body, push), attempt + 1), 0);
        }
      });
      return;
    }
    long wait = backoff(attempt);
    LOG.info("Push of {} refused ({}: {}); retry {} of {} in {} ms", what, status, err.getMessage(), attempt + 1,
        retries, wait);
    // Sent to the partition's location as it is then: another task may have moved it meanwhile.
    retryLater(push, () -> send(Push.single(table.get(loc.getPartitionId()), push.body, push), attempt + 1), wait);
  }

  /** A failed merged push becomes one single push per partition, each going through the failure handling above. */
  private void splitMerged(Push merged, int attempt, StatusCode status, Throwable err) {
    int n = merged.locations.length;
    AtomicInteger open = new AtomicInteger(n);
    List<Push> singles = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      ByteBuf slice = merged.body.retainedSlice(merged.body.readerIndex() + merged.offsets[i], merged.length(i));
      singles.add(new Push(new PartitionLocation[] {merged.locations[i]}, new int[] {0}, slice, merged.size, open));
    }
    merged.body.release();
    for (Push single : singles) {
      if (status == StatusCode.HARD_SPLIT || status == StatusCode.RETRY_LATER
          || status == StatusCode.REPLICATE_FAILED || status == StatusCode.DISK_FAILED) {
        // Only some partitions may be full, on a failed disk or have a failed replica, or the worker was briefly
        // busy: let each single find out for itself.
        long wait = status == StatusCode.RETRY_LATER ? backoff(attempt) : 0;
        retryLater(single, () -> send(single, attempt + 1), wait);
      } else {
        failed(single, attempt, err);
      }
    }
  }

  /** Exponential back-off with jitter: between half and all of retryWait * 2^attempt, at most 10 s. */
  private long backoff(int attempt) {
    long full = Math.min(MAX_BACKOFF_MS, retryWaitMs << Math.min(attempt, 20));
    return full / 2 + ThreadLocalRandom.current().nextLong(full / 2 + 1);
  }

  /** Stops retrying; data already pushed by this attempt is ignored by readers since the attempt never ends. */
  public void abort() {
    aborted = true;
    for (QueuedBatches q : queued.values()) {
      for (ByteBuf b : q.batches) b.release();
    }
    queued.clear();
  }

  /** Whether a push found the stage already ended (this attempt lost the race to another). */
  public boolean stageEnded() {
    return stageEnded;
  }
}
