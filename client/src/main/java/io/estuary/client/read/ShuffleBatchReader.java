package io.estuary.client.read;

import io.estuary.client.ShuffleClient;
import io.estuary.client.ShuffleSpec;
import io.estuary.client.UnreachableBackoff;
import io.estuary.client.batch.BatchCodec;
import io.estuary.client.batch.BatchHeader;
import io.estuary.client.batch.CorruptBatchException;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.protocol.EpochFiles;
import io.estuary.common.protocol.GetReducerFileGroupResponse;
import io.estuary.common.protocol.OpenStreamRequest;
import io.estuary.common.protocol.PartitionFiles;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.StreamHandle;
import io.estuary.common.status.StatusCode;
import io.estuary.common.util.EstuaryException;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.rpc.ControlClient;
import io.netty.buffer.ByteBuf;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the batches of partitions [start, end) written by maps [startMap, endMap), decoded, in file order, from the
 * newest generation of the shuffle.
 *
 * <p>Only the attempt of each map that ended first counts: batches of other attempts (failed or speculative ones)
 * are skipped, and a batch seen twice (a push retried after its first try landed, or the same epoch read again from
 * its replica) is read once. Every epoch of a partition is read once, from its first copy that works: when a copy
 * fails (worker gone, file lost, corrupt batch) the reader restarts that epoch from the beginning of the next copy
 * (chunk boundaries may differ between copies; deduplication skips what was already returned). When every copy of
 * an epoch failed and some only because their worker could not be reached (a restarting worker keeps its committed
 * files), those are tried again after a back-off, within {@code estuary.client.fetch.unreachableTimeout}.
 *
 * <p>With integrity checking on, the batches, records and checksums read per partition are compared with what the
 * winning map attempts reported. When an epoch cannot be read from any copy, or the counts differ, the reader throws
 * {@link ShuffleDataLostException}: the engine reruns the maps. Confined to one thread.
 */
public final class ShuffleBatchReader implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ShuffleBatchReader.class);

  private final ShuffleClient client;
  private final ShuffleSpec spec;
  private final int startPartition;
  private final int endPartition;
  private final int startMap;
  private final int endMap;
  private final int maxChunksInFlight;
  private final boolean verify;
  private final BatchCodec codec;
  /** Waits before trying unreachable copies again; reset whenever a chunk arrives. */
  private final UnreachableBackoff unreachableWait;

  /** One epoch of one partition still to read, with the copies not yet tried. */
  private static final class EpochRead {
    final int partition;
    final int epoch;
    final Deque<PartitionLocation> copies;
    /** Copies that failed only because their worker could not be reached: tried again after a wait. */
    final List<PartitionLocation> unreachable = new ArrayList<>();
    /** Where this partition's reads are counted (shared by its epochs). */
    final Counts counts;

    EpochRead(int partition, EpochFiles e, Counts counts) {
      this.partition = partition;
      this.epoch = e.getEpoch();
      this.copies = new ArrayDeque<>(e.getCopiesList());
      this.counts = counts;
    }
  }

  /** What was read of one partition, and what should have been. */
  private static final class Counts {
    long batches;
    long records;
    long checksum;
    final PartitionFiles expected;

    Counts(PartitionFiles expected) {
      this.expected = expected;
    }
  }

  private final Deque<EpochRead> pending = new ArrayDeque<>();
  private final Map<Integer, Counts> counts = new HashMap<>();
  private int[] mapAttempts;
  private int shuffleId = -1;
  private boolean checkCounts;
  /** Only batches are compared: the read covers part of the maps (see WrittenCounts). */
  private boolean batchesOnly;
  private final Set<Long> seenBatches = new HashSet<>();
  private EpochRead current;
  private ChunkStream stream;
  private String streamName;
  private ByteBuf chunk;
  private int chunkPos;
  private int chunkLen;
  private long bytesFetched;
  private long chunksFetched;
  private long fetchWaitNanos;
  private long batchesRead;
  private long recordsRead;
  private boolean verified;

  public ShuffleBatchReader(ShuffleClient client, ShuffleSpec spec, int startPartition, int endPartition,
      int startMap, int endMap) {
    this.client = client;
    this.spec = spec;
    this.startPartition = startPartition;
    this.endPartition = endPartition;
    this.startMap = startMap;
    this.endMap = endMap;
    this.maxChunksInFlight = client.conf().get(ClientConfig.FETCH_MAX_CHUNKS_IN_FLIGHT);
    this.verify = client.conf().get(ClientConfig.INTEGRITY_CHECK);
    this.codec = new BatchCodec(client.conf().get(ClientConfig.COMPRESSION_CODEC));
    this.unreachableWait = new UnreachableBackoff(client.conf().get(ClientConfig.FETCH_UNREACHABLE_TIMEOUT));
  }

  private void init() throws RemoteException {
    GetReducerFileGroupResponse r;
    try {
      r = client.reducerFiles(spec, startPartition, endPartition, startMap, endMap);
    } catch (RemoteException e) {
      if (e.status() == StatusCode.SHUFFLE_DATA_LOST) throw lost(-1, -1, e.getMessage(), e);
      throw e;
    }
    shuffleId = r.getEstuaryShuffleId();
    checkCounts = verify && r.getIntegrityChecked();
    batchesOnly = r.getBatchCountsOnly();
    mapAttempts = new int[r.getMapAttemptsCount()];
    for (int i = 0; i < mapAttempts.length; i++) mapAttempts[i] = r.getMapAttempts(i);
    for (int m = startMap; m < Math.min(endMap, mapAttempts.length); m++) {
      if (mapAttempts[m] < 0) {
        throw new EstuaryException("map " + m + " of " + spec + " never reported its end; refusing to read "
            + "partial output");
      }
    }
    for (PartitionFiles pf : r.getPartitionsList()) {
      if (pf.getIncomplete() && !checkCounts) {
        throw lost(pf.getPartitionId(), -1, "an epoch of partition " + pf.getPartitionId() + " has no committed "
            + "copy, and without integrity counts nothing proves it held no data", null);
      }
      Counts c = new Counts(pf);
      counts.put(pf.getPartitionId(), c);
      for (EpochFiles e : pf.getEpochsList()) {
        if (e.getBytes() > 0 && e.getCopiesCount() > 0) pending.add(new EpochRead(pf.getPartitionId(), e, c));
      }
    }
  }

  /**
   * The next batch's decoded bytes (serialized records), or null when all is read. The buffer is valid until the
   * next call (it is a view of the fetched chunk or of the decompression buffer); the caller does not release it.
   */
  public ByteBuf next() throws RemoteException {
    if (mapAttempts == null) init();
    while (true) {
      while (chunkPos < chunkLen) {
        ByteBuf batch;
        try {
          batch = nextBatchInChunk();
        } catch (CorruptBatchException e) {
          failCopy(e);
          break;
        }
        if (batch != null) return batch;
      }
      if (!loadNextChunk()) {
        verifyCounts();
        return null;
      }
    }
  }

  private ByteBuf nextBatchInChunk() {
    if (chunkLen - chunkPos < BatchHeader.SIZE) {
      throw new CorruptBatchException("corrupt data in " + streamName + ": " + (chunkLen - chunkPos)
          + " trailing bytes are not a batch");
    }
    int h = chunkPos;
    int mapId = BatchHeader.mapId(chunk, h);
    int dataLength = BatchHeader.dataLength(chunk, h);
    if (dataLength < 0 || dataLength > chunkLen - h - BatchHeader.SIZE || BatchHeader.rawLength(chunk, h) < 0) {
      throw new CorruptBatchException("corrupt data in " + streamName + ": batch of " + dataLength
          + " bytes overruns its chunk");
    }
    chunkPos = h + BatchHeader.SIZE + dataLength;
    if (mapId < startMap || mapId >= endMap) return null;
    if (mapId >= mapAttempts.length || mapAttempts[mapId] != BatchHeader.attemptId(chunk, h)) return null;
    long id = ((long) mapId << 32) | (BatchHeader.batchId(chunk, h) & 0xffffffffL);
    if (seenBatches.contains(id)) return null;
    ByteBuf decoded = codec.decode(chunk, h, streamName); // checks the checksum first
    seenBatches.add(id);
    batchesRead++;
    recordsRead += BatchHeader.records(chunk, h);
    Counts c = current.counts;
    c.batches++;
    c.records += BatchHeader.records(chunk, h);
    c.checksum += BatchHeader.checksum(chunk, h) & 0xffffffffL;
    return decoded;
  }

  private boolean loadNextChunk() throws RemoteException {
    while (true) {
      if (stream == null) {
        if (current == null || current.copies.isEmpty()) {
          current = pending.poll();
          if (current == null) return false;
        }
        try {
          open(current.copies.peek());
        } catch (RemoteException e) {
          failCopy(e);
        }
        continue;
      }
      releaseChunk();
      ByteBuf buf;
      long t0 = System.nanoTime();
      try {
        buf = stream.next();
      } catch (RemoteException e) {
        failCopy(e);
        continue;
      } finally {
        fetchWaitNanos += System.nanoTime() - t0;
      }
      if (buf == null) {
        stream.close();
        stream = null;
        current.copies.clear(); // this epoch is fully read
        continue;
      }
      // Batches are decoded straight out of the fetched buffer: offsets below are relative to its start.
      chunk = buf.readerIndex() == 0 ? buf : buf.slice();
      if (chunk != buf) {
        chunk.retain();
        buf.release();
      }
      chunkLen = chunk.readableBytes();
      chunkPos = 0;
      unreachableWait.reset();
      bytesFetched += chunkLen;
      chunksFetched++;
      return true;
    }
  }

  /**
   * The copy being read failed: drop it and go on with the epoch's next copy. When none is left but some failed
   * only because their worker could not be reached (it may be restarting, and keeps its committed files), wait and
   * try those again, within the unreachable timeout; else give up on the partition. Every retry reads its copy from
   * the start: batches already returned are skipped by their ids, and counted once.
   */
  private void failCopy(Exception cause) throws RemoteException {
    if (stream != null) stream.close();
    stream = null;
    releaseChunk();
    PartitionLocation failed = current.copies.poll();
    if (failed != null && cause instanceof RemoteException && ((RemoteException) cause).isConnectionFailure()) {
      current.unreachable.add(failed);
    }
    if (!current.copies.isEmpty()) {
      LOG.warn("Reading {} failed ({}); reading its other copy from the start", streamName, cause.getMessage());
      return;
    }
    long wait = current.unreachable.isEmpty() ? -1 : unreachableWait.nextWait(System.currentTimeMillis());
    if (wait < 0) {
      throw lost(current.partition, current.epoch, "no copy of " + streamName + " could be read; the last failed "
          + "with: " + cause.getMessage(), cause);
    }
    LOG.warn("No copy of {} could be read, the last failed with: {}; {} unreachable, trying again in {} ms",
        streamName, cause.getMessage(), current.unreachable.size() == 1 ? "its worker was" : "their workers were",
        wait);
    try {
      Thread.sleep(wait);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RemoteException("interrupted while waiting to read " + streamName + " again", e);
    }
    current.copies.addAll(current.unreachable);
    current.unreachable.clear();
  }

  private void verifyCounts() throws ShuffleDataLostException {
    if (verified || !checkCounts) return;
    verified = true;
    for (Map.Entry<Integer, Counts> e : counts.entrySet()) {
      Counts c = e.getValue();
      PartitionFiles x = c.expected;
      if (c.batches != x.getExpectedBatches() || !batchesOnly && (c.records != x.getExpectedRecords()
          || c.checksum != x.getExpectedChecksum())) {
        throw lost(e.getKey(), -1, "partition " + e.getKey() + " of " + spec + " (maps " + startMap + "-"
            + (endMap - 1) + ") does not add up: read " + c.batches + " batches, " + c.records + " records, "
            + "checksum " + Long.toHexString(c.checksum) + "; the maps wrote " + x.getExpectedBatches()
            + " batches, " + x.getExpectedRecords() + " records, checksum "
            + Long.toHexString(x.getExpectedChecksum()), null);
      }
    }
  }

  private ShuffleDataLostException lost(int partition, int epoch, String message, Throwable cause) {
    return new ShuffleDataLostException(spec.shuffleId, shuffleId, partition, epoch, message, cause);
  }

  private void open(PartitionLocation loc) throws RemoteException {
    streamName = "partition " + loc.getPartitionId() + " epoch " + loc.getEpoch() + " (" + loc.getRole() + ") of "
        + spec + " on " + loc.getWorker().getHost() + ":" + loc.getWorker().getFetchPort();
    TransportClient c = client.fetchClient(loc.getWorker());
    OpenStreamRequest.Builder open = OpenStreamRequest.newBuilder().setAppId(spec.appId).setShuffleId(shuffleId)
        .setPartitionId(loc.getPartitionId()).setEpoch(loc.getEpoch());
    if (startMap > 0 || endMap < spec.numMappers) {
      // Only these maps: the worker serves the parts of the file that may hold them (batches of other maps that
      // come along are skipped below, as they are from a worker that serves the whole file).
      open.setStartMap(startMap).setEndMap(Math.max(startMap + 1, Math.min(endMap, spec.numMappers)));
    }
    StreamHandle h;
    long t0 = System.nanoTime();
    try {
      h = ControlClient.ask(c, Request.newBuilder().setOpenStream(open), StreamHandle.parser());
    } catch (RemoteException e) {
      throw new RemoteException("cannot open " + streamName + ": " + e.getMessage(), e);
    } finally {
      fetchWaitNanos += System.nanoTime() - t0;
    }
    if (h.getNumChunks() > 0) {
      stream = new ChunkStream(c, h.getStreamId(), h.getNumChunks(), maxChunksInFlight);
    } else {
      current.copies.clear(); // an empty file: nothing to read in this epoch
    }
  }

  public long bytesFetched() {
    return bytesFetched;
  }

  /** Chunks received from workers so far. */
  public long chunksFetched() {
    return chunksFetched;
  }

  /** Nanoseconds spent waiting for workers: opening streams and waiting for chunks (the engine's fetch wait). */
  public long fetchWaitNanos() {
    return fetchWaitNanos;
  }

  public long batchesRead() {
    return batchesRead;
  }

  public long recordsRead() {
    return recordsRead;
  }

  private void releaseChunk() {
    if (chunk != null) {
      chunk.release();
      chunk = null;
    }
    chunkPos = 0;
    chunkLen = 0;
  }

  @Override
  public void close() {
    if (stream != null) stream.close();
    stream = null;
    releaseChunk();
  }
}
