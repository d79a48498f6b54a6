package io.estuary.client.read;

import io.estuary.client.batch.BatchCodec;
import io.estuary.client.batch.BatchHeader;
import io.estuary.client.batch.CorruptBatchException;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.protocol.EpochFiles;
import io.estuary.common.protocol.GetReducerFileGroupResponse;
import io.estuary.common.protocol.PartitionFiles;
import io.estuary.common.status.StatusCode;
import io.estuary.common.time.Clock;
import io.estuary.common.util.EstuaryException;
import io.estuary.network.client.RemoteException;
import io.netty.buffer.ByteBuf;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the batches of partitions [start, end) written by maps [startMap, endMap), decoded, in file order, from the
 * newest generation of the shuffle.
 *
 * <p>Only the attempt of each map that ended first counts: batches of other attempts (failed or speculative ones)
 * are skipped, and a batch seen twice (a push retried after its first try landed, or the same epoch read again from
 * its replica) is read once. Every epoch of a partition is read once, from its first copy that works: when a copy
 * fails the reader goes on with the epoch's next copy, from its start (chunk boundaries may differ between copies;
 * deduplication skips what was already returned). How a failure counts depends on what it says:
 * <ul>
 *   <li>the worker dropped the stream ({@code UNKNOWN_STREAM}: it idled out while the task was busy elsewhere): the
 *       same copy is opened again at once and read on from the chunk that failed, without counting, as long as a
 *       chunk came in since the last open;
 *   <li>a failure that may pass (the worker could not be reached, was busy, or broke off or timed out a chunk): the
 *       copy is tried again, from the chunk where it stopped, once the other copies failed too, after a back-off.
 *       Failures to reach the worker at all are bounded by {@code estuary.client.fetch.unreachableTimeout} in a row
 *       without a chunk; failures after the worker answered by a budget per copy and per partition
 *       ({@code retriesPerCopy}, {@code retriesPerPartition}) over the whole read, that no chunk received resets;
 *   <li>anything else (file lost, disk failed, corrupt batch, an unknown location): real loss, the copy is given up.
 * </ul>
 * Streams are closed on the worker as soon as the reader is done with them (read to the end, given up, or the reader
 * closed early, e.g. by a {@code LIMIT}).
 *
 * <p>With integrity checking on, the batches, records and checksums read per partition are compared with what the
 * winning map attempts reported. When an epoch cannot be read from any copy, or the counts differ, the reader throws
 * {@link ShuffleDataLostException}: the engine reruns the maps. Small epochs, which come back with their open, are
 * opened a few ahead of the one being read ({@code estuary.client.fetch.openAhead}). Copies are opened by a
 * {@link CopyOpener}, and
 * {@link CopyRetries} decides what a failure costs. Confined to one thread.
 */
public final class ShuffleBatchReader implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ShuffleBatchReader.class);

    private final ReaderPort client;
    private final Clock clock;
    private final ShuffleSpec spec;
    private final int startPartition;
    private final int endPartition;
    private final int startMap;
    private final int endMap;
    private final boolean verify;
    private final BatchCodec codec;
    private final CopyOpener opener;
    private final CopyRetries retries;
    private final int openAhead;

    private final Deque<EpochRead> pending = new ArrayDeque<>();
    private final Map<Integer, PartitionCounts> counts = new HashMap<>();
    private int[] mapAttempts;
    private int shuffleId = -1;
    private boolean checkCounts;
    /** Only batches are compared: the read covers part of the maps (see WrittenCounts). */
    private boolean batchesOnly;

    private final SeenBatches seenBatches = new SeenBatches();
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

    public ShuffleBatchReader(
            ReaderPort client, ShuffleSpec spec, int startPartition, int endPartition, int startMap, int endMap) {
        this.client = client;
        this.clock = client.clock();
        this.spec = spec;
        this.startPartition = startPartition;
        this.endPartition = endPartition;
        this.startMap = startMap;
        this.endMap = endMap;
        this.verify = client.conf().get(ClientConfig.INTEGRITY_CHECK);
        this.codec = new BatchCodec(client.conf().get(ClientConfig.COMPRESSION_CODEC));
        this.opener = new CopyOpener(client, spec, startMap, endMap);
        this.retries = new CopyRetries(client.conf(), clock);
        this.openAhead = client.conf().get(ClientConfig.FETCH_OPEN_AHEAD);
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
                throw new EstuaryException(
                        "map " + m + " of " + spec + " never reported its end; refusing to read " + "partial output");
            }
        }
        for (PartitionFiles pf : r.getPartitionsList()) {
            if (pf.getIncomplete() && !checkCounts) {
                throw lost(
                        pf.getPartitionId(),
                        -1,
                        "an epoch of partition " + pf.getPartitionId() + " has no committed "
                                + "copy, and without integrity counts nothing proves it held no data",
                        null);
            }
            PartitionCounts c = new PartitionCounts(pf);
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
                    failCopy(e, true);
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
            throw new CorruptBatchException(
                    "corrupt data in " + streamName + ": " + (chunkLen - chunkPos) + " trailing bytes are not a batch");
        }
        int h = chunkPos;
        int mapId = BatchHeader.mapId(chunk, h);
        int dataLength = BatchHeader.dataLength(chunk, h);
        if (dataLength < 0 || dataLength > chunkLen - h - BatchHeader.SIZE || BatchHeader.rawLength(chunk, h) < 0) {
            throw new CorruptBatchException(
                    "corrupt data in " + streamName + ": batch of " + dataLength + " bytes overruns its chunk");
        }
        chunkPos = h + BatchHeader.SIZE + dataLength;
        if (mapId < startMap || mapId >= endMap) return null;
        if (mapId >= mapAttempts.length || mapAttempts[mapId] != BatchHeader.attemptId(chunk, h)) return null;
        int batchId = BatchHeader.batchId(chunk, h);
        if (seenBatches.contains(mapId, batchId)) return null;
        ByteBuf decoded = codec.decode(chunk, h, streamName); // checks the checksum first
        seenBatches.add(mapId, batchId);
        batchesRead++;
        recordsRead += BatchHeader.records(chunk, h);
        current.counts.count(chunk, h);
        return decoded;
    }

    private boolean loadNextChunk() throws RemoteException {
        while (true) {
            if (stream == null) {
                if (current == null || current.done) {
                    current = pending.poll();
                    if (current == null) return false;
                    sendOpensAhead();
                }
                try {
                    open(current.copies.peek());
                } catch (RemoteException e) {
                    failCopy(e, false);
                }
                continue;
            }
            releaseChunk();
            ByteBuf buf;
            long t0 = clock.nanos();
            try {
                buf = stream.next();
            } catch (RemoteException e) {
                failCopy(e, true);
                continue;
            } finally {
                fetchWaitNanos += clock.nanos() - t0;
            }
            if (buf == null) {
                closeStream();
                current.done = true; // this epoch is fully read
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
            retries.chunkReceived();
            bytesFetched += chunkLen;
            chunksFetched++;
            return true;
        }
    }

    /**
     * The copy being read failed ({@code afterOpen}: its worker had answered, the stream was open). Depending on the
     * failure (see the class doc) the copy is opened again at once, put aside to be tried again after a wait, or given
     * up; the epoch goes on with its next copy. When none is left but some are put aside, waits and tries those again
     * (within the unreachable timeout); when none is put aside either, the partition is lost.
     */
    private void failCopy(Exception cause, boolean afterOpen) throws RemoteException {
        EpochRead.CopyRead copy = current.copies.poll();
        int stoppedAt = stream != null ? stream.nextIndex() : copy.resumeChunk;
        boolean progressed = stream != null && stream.received() > 0;
        boolean closedWhileAway = stream != null && stream.foundClosed();
        closeStream();
        releaseChunk();
        StatusCode status = cause instanceof RemoteException ? ((RemoteException) cause).status() : null;
        if (CopyRetries.droppedWhileAway(status, progressed, closedWhileAway)) {
            LOG.info(
                    "{} was dropped on its worker ({}); opening it again at chunk {}",
                    streamName,
                    cause.getMessage(),
                    stoppedAt);
            copy.resumeChunk = stoppedAt;
            current.copies.addFirst(copy);
            return;
        }
        String givenUp = retries.failed(current, copy, status, afterOpen, stoppedAt);
        if (!current.copies.isEmpty()) {
            LOG.warn(
                    "Reading {} failed ({}){}; reading its other copy",
                    streamName,
                    cause.getMessage(),
                    givenUp == null ? "" : ", given up: " + givenUp);
            return;
        }
        long wait = retries.nextWait(current);
        if (wait < 0) {
            throw lost(
                    current.partition,
                    current.epoch,
                    "no copy of " + streamName + " could be read; the last failed " + "with: " + cause.getMessage()
                            + CopyRetries.whyLost(current, givenUp),
                    cause);
        }
        LOG.warn(
                "No copy of {} could be read, the last failed with: {}; trying {} again in {} ms",
                streamName,
                cause.getMessage(),
                current.retry.size() == 1
                        ? "the copy that may come back"
                        : current.retry.size() + " copies that may come back",
                wait);
        try {
            Thread.sleep(wait);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RemoteException("interrupted while waiting to read " + streamName + " again", e);
        }
        current.copies.addAll(current.retry);
        current.retry.clear();
    }

    private void verifyCounts() throws ShuffleDataLostException {
        if (verified || !checkCounts) return;
        verified = true;
        for (Map.Entry<Integer, PartitionCounts> e : counts.entrySet()) {
            String mismatch = e.getValue().mismatch(batchesOnly);
            if (mismatch != null) {
                throw lost(
                        e.getKey(),
                        -1,
                        "partition " + e.getKey() + " of " + spec + " (maps " + startMap + "-" + (endMap - 1)
                                + ") does not add up: " + mismatch,
                        null);
            }
        }
    }

    private ShuffleDataLostException lost(int partition, int epoch, String message, Throwable cause) {
        client.fileGroupUnreadable(spec); // what was kept of where the files are is wrong: the next task asks again
        return new ShuffleDataLostException(spec.shuffleId, shuffleId, partition, epoch, message, cause);
    }

    /**
     * Sends the opens of the next few epochs to read that are small enough to come back inline, so that their bytes
     * are on the way while this one is read: a reader of many small partitions then waits about once, not once each.
     * Opened ahead are only epochs whose answer holds nothing on the worker (inline), first copies, first opens.
     */
    private void sendOpensAhead() {
        int looked = 0;
        for (EpochRead e : pending) {
            if (looked++ >= openAhead) break;
            if (e.ahead != null || !opener.inline(e.bytes) || e.copies.isEmpty()) continue;
            e.ahead = opener.openAhead(shuffleId, e.copies.peek());
        }
    }

    private void open(EpochRead.CopyRead copy) throws RemoteException {
        streamName = opener.describe(copy.location);
        long t0 = clock.nanos();
        CopyOpener.Ahead ahead = current.ahead;
        current.ahead = null;
        try {
            stream = opener.open(shuffleId, copy, streamName, ahead);
        } finally {
            fetchWaitNanos += clock.nanos() - t0;
        }
        if (stream == null) current.done = true; // an empty file: nothing to read in this epoch
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

    /** Ends the stream being read, telling its worker when it still holds it. */
    private void closeStream() {
        if (stream != null) stream.close();
        stream = null;
    }

    /** Closes the stream being read, if any (a reader may be closed before the end, e.g. by a limit). */
    @Override
    public void close() {
        closeStream();
        releaseChunk();
        if (current != null && current.ahead != null) current.ahead.discard();
        for (EpochRead e : pending) {
            if (e.ahead != null) e.ahead.discard();
            e.ahead = null;
        }
    }
}
