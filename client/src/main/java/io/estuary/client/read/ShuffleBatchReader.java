package io.estuary.client.read;

import io.estuary.client.ShuffleClient;
import io.estuary.client.ShuffleSpec;
import io.estuary.client.batch.BatchCodec;
import io.estuary.client.batch.BatchHeader;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.protocol.GetReducerFileGroupResponse;
import io.estuary.common.protocol.OpenStreamRequest;
import io.estuary.common.protocol.PartitionFiles;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.StreamHandle;
import io.estuary.common.util.EstuaryException;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.rpc.ControlClient;
import io.netty.buffer.ByteBuf;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Reads the batches of partitions [start, end) written by maps [startMap, endMap), decoded, in file order.
 *
 * <p>Only the attempt of each map that ended first counts: batches of other attempts (failed or speculative ones)
 * are skipped, and a batch seen twice (a push retried after its first try landed) is read once.
 */
public final class ShuffleBatchReader implements AutoCloseable {
  private final ShuffleClient client;
  private final ShuffleSpec spec;
  private final int startPartition;
  private final int endPartition;
  private final int startMap;
  private final int endMap;
  private final int maxChunksInFlight;
  private final BatchCodec codec;

  private final Deque<PartitionLocation> pending = new ArrayDeque<>();
  private int[] mapAttempts;
  private final Set<Long> seenBatches = new HashSet<>();
  private ChunkStream stream;
  private String streamName;
  private ByteBuf chunk;
  private int chunkPos;
  private int chunkLen;
  private long bytesFetched;
  private long batchesRead;

  public ShuffleBatchReader(ShuffleClient client, ShuffleSpec spec, int startPartition, int endPartition,
      int startMap, int endMap) {
    this.client = client;
    this.spec = spec;
    this.startPartition = startPartition;
    this.endPartition = endPartition;
    this.startMap = startMap;
    this.endMap = endMap;
    this.maxChunksInFlight = client.conf().get(ClientConfig.FETCH_MAX_CHUNKS_IN_FLIGHT);
    this.codec = new BatchCodec(client.conf().get(ClientConfig.COMPRESSION_CODEC));
  }

  private void init() throws RemoteException {
    GetReducerFileGroupResponse r = client.reducerFiles(spec, startPartition, endPartition);
    mapAttempts = new int[r.getMapAttemptsCount()];
    for (int i = 0; i < mapAttempts.length; i++) mapAttempts[i] = r.getMapAttempts(i);
    for (int m = startMap; m < Math.min(endMap, mapAttempts.length); m++) {
      if (mapAttempts[m] < 0) {
        throw new EstuaryException("map " + m + " of " + spec + " never reported its end; refusing to read "
            + "partial output");
      }
    }
    for (PartitionFiles pf : r.getPartitionsList()) {
      List<PartitionLocation> locs = pf.getLocationsList();
      for (int i = 0; i < locs.size(); i++) {
        if (pf.getBytesCount() > i && pf.getBytes(i) == 0) continue; // nothing was written there
        pending.add(locs.get(i));
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
        ByteBuf batch = nextBatchInChunk();
        if (batch != null) return batch;
      }
      if (!loadNextChunk()) return null;
    }
  }

  private ByteBuf nextBatchInChunk() {
    if (chunkLen - chunkPos < BatchHeader.SIZE) {
      throw new EstuaryException("corrupt data in " + streamName + ": " + (chunkLen - chunkPos)
          + " trailing bytes are not a batch");
    }
    int h = chunkPos;
    int mapId = chunk.getInt(h);
    int attemptId = chunk.getInt(h + 4);
    int batchId = chunk.getInt(h + 8);
    int codecId = chunk.getInt(h + 12);
    int rawLength = chunk.getInt(h + 16);
    int dataLength = chunk.getInt(h + 20);
    int checksum = chunk.getInt(h + 24);
    int dataStart = chunkPos + BatchHeader.SIZE;
    if (dataLength < 0 || dataLength > chunkLen - dataStart || rawLength < 0) {
      throw new EstuaryException("corrupt data in " + streamName + ": batch of " + dataLength + " bytes overruns "
          + "its chunk");
    }
    chunkPos = dataStart + dataLength;
    if (mapId < startMap || mapId >= endMap) return null;
    if (mapId >= mapAttempts.length || mapAttempts[mapId] != attemptId) return null;
    if (!seenBatches.add(((long) mapId << 32) | (batchId & 0xffffffffL))) return null;
    batchesRead++;
    return codec.decode(codecId, rawLength, checksum, chunk, dataStart, dataLength, streamName);
  }

  private boolean loadNextChunk() throws RemoteException {
    while (true) {
      if (stream == null) {
        PartitionLocation loc = pending.poll();
        if (loc == null) return false;
        open(loc);
        continue;
      }
      releaseChunk();
      ByteBuf buf = stream.next();
      if (buf == null) {
        stream.close();
        stream = null;
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
      bytesFetched += chunkLen;
      return true;
    }
  }

  private void open(PartitionLocation loc) throws RemoteException {
    streamName = "partition " + loc.getPartitionId() + " epoch " + loc.getEpoch() + " of " + spec + " on "
        + loc.getWorker().getHost() + ":" + loc.getWorker().getFetchPort();
    TransportClient c = client.fetchClient(loc.getWorker());
    StreamHandle h;
    try {
      h = ControlClient.ask(c, Request.newBuilder().setOpenStream(OpenStreamRequest.newBuilder()
          .setAppId(spec.appId).setShuffleId(spec.shuffleId).setPartitionId(loc.getPartitionId())
          .setEpoch(loc.getEpoch())), StreamHandle.parser());
    } catch (RemoteException e) {
      throw new RemoteException("cannot open " + streamName + ": " + e.getMessage(), e);
    }
    if (h.getNumChunks() > 0) stream = new ChunkStream(c, h.getStreamId(), h.getNumChunks(), maxChunksInFlight);
  }

  public long bytesFetched() {
    return bytesFetched;
  }

  public long batchesRead() {
    return batchesRead;
  }

  private void releaseChunk() {
    if (chunk != null) {
      chunk.release();
      chunk = null;
      chunkPos = 0;
      chunkLen = 0;
    }
  }

  @Override
  public void close() {
    if (stream != null) stream.close();
    stream = null;
    releaseChunk();
  }
}
