package io.estuary.client.write;

import io.estuary.client.batch.BatchCodec;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.status.StatusCode;
import io.estuary.common.time.Clock;
import io.estuary.network.client.RemoteException;
import io.estuary.network.protocol.PushMergedData;
import io.netty.buffer.ByteBuf;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The output of one map attempt. Serialized records are buffered per partition; a full buffer becomes a batch
 * (header + compressed records) pushed to that partition's current location. At the end, the partial buffers bound
 * for one worker go out together in merged pushes, every push is awaited, and the driver is told the attempt ended,
 * with what it wrote to each partition (batches, records, checksum) for readers to verify.
 *
 * <p>The parts: {@link PartitionBuffers} holds the records not yet in a batch, {@link WrittenBatches} encodes
 * batches and counts what went to each partition, {@link SmallBatchQueue} groups small whole batches by worker, and
 * {@link PushSender} sends pushes and sees each through acknowledgement or failure, as {@link PushFailurePolicy}
 * decides from the failure's {@link StatusCode} (back off, revive, split, stage ended, give up).
 *
 * <p>Confined to the task's thread, except push completions, which run on Netty or timer threads and touch only the
 * push itself, the {@link PushTracker} and the shared {@link LocationTable}.
 */
public final class MapOutputWriter {
    private static final Logger LOG = LoggerFactory.getLogger(MapOutputWriter.class);

    private final WriterPort port;
    private final Clock clock;
    private final ShuffleSpec spec;
    private final int mapId;
    private final int attemptId;
    private final int stageId;
    private final int stageAttempt;
    private final boolean indeterminate;
    private final int bufferSize;
    private final long mergedSize;
    private final long maxBuffered;
    private final long awaitMs;
    private final PartitionBuffers buffers;
    private final WrittenBatches written;
    private final PushSender sender;
    /** Small whole batches ({@link #writeBatch}) waiting to be pushed together, by worker. */
    private final SmallBatchQueue queued;

    private long earlyPushes;
    /** Time the task spent handing batches to the network and waiting for them (for the engine's write time). */
    private long writeNanos;

    private LocationTable table;

    /** The partition of the record being streamed in, or -1 between records. */
    private int current = -1;
    /** {@link #pushBuffered} was asked for while a record was half written: it runs once the record ends. */
    private boolean pushAfterRecord;

    private final OutputStream recordStream = new OutputStream() {
        private final byte[] one = new byte[1];

        @Override
        public void write(int b) {
            one[0] = (byte) b;
            write(one, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            if (current >= 0 && len > 0) buffers.appendBytes(current, b, off, len);
        }
    };

    public MapOutputWriter(WriterPort port, ShuffleSpec spec, int mapId, int attemptId) {
        this(port, spec, mapId, attemptId, 0, 0, false);
    }

    /**
     * @param stageId the engine's stage this map belongs to (0 for engines without stages); with the attempt it
     *     orders this writer against other attempts of the stage
     * @param stageAttempt the attempt of the stage this map belongs to: a rerun after lost data writes a fresh
     *     generation of the shuffle, and a writer older than the newest generation's attempt is refused
     * @param indeterminate whether the stage's output may differ when it reruns (then a rerun replaces all of it)
     */
    public MapOutputWriter(
            WriterPort port,
            ShuffleSpec spec,
            int mapId,
            int attemptId,
            int stageId,
            int stageAttempt,
            boolean indeterminate) {
        EstuaryConf conf = port.conf();
        this.port = port;
        this.clock = port.clock();
        this.spec = spec;
        this.mapId = mapId;
        this.attemptId = attemptId;
        this.stageId = stageId;
        this.stageAttempt = stageAttempt;
        this.indeterminate = indeterminate;
        this.bufferSize = (int) (long) conf.get(ClientConfig.PUSH_BUFFER_SIZE);
        this.mergedSize = conf.get(ClientConfig.PUSH_MERGED_SIZE);
        this.maxBuffered = conf.get(ClientConfig.PUSH_MAX_BUFFERED);
        PushFailurePolicy policy =
                new PushFailurePolicy(conf.get(ClientConfig.PUSH_RETRIES), conf.get(ClientConfig.PUSH_RETRY_WAIT));
        // A primary answers a push once its replica has the data, and gives the replica up to its own request timeout:
        // waiting only as long, a writer would often time out together with the primary and blame a live worker for
        // its stopped replica. So a push waits for two request timeouts.
        long pushTimeoutMs = 2 * conf.get(NetworkConfig.RPC_TIMEOUT);
        this.awaitMs = policy.settleTimeoutMs(pushTimeoutMs);
        this.buffers = new PartitionBuffers(spec.numPartitions, bufferSize);
        this.written = new WrittenBatches(
                new BatchCodec(conf.get(ClientConfig.COMPRESSION_CODEC), conf.get(ClientConfig.COMPRESSION_ZSTD_LEVEL)),
                mapId,
                attemptId,
                spec.numPartitions);
        this.sender = new PushSender(
                port,
                spec,
                mapId,
                attemptId,
                policy,
                pushTimeoutMs,
                conf.get(ClientConfig.PUSH_MAX_BYTES_IN_FLIGHT),
                conf.get(ClientConfig.CONGESTION_MAX_DELAY));
        this.queued = new SmallBatchQueue(mergedSize, sender);
    }

    /**
     * A stream into the partition buffers, for a serializer that writes every record through one stream: bytes written
     * between {@link #beginRecord} and {@link #endRecord} go straight into that partition's buffer, with no staging
     * copy. Bytes written outside a record (a stream's header or trailer, which a serializer whose records may be
     * concatenated does not need) are dropped.
     */
    public OutputStream recordStream() {
        return recordStream;
    }

    /** The bytes written to {@link #recordStream} from now on are one record of {@code partition}. */
    public void beginRecord(int partition) {
        if (partition < 0 || partition >= spec.numPartitions) {
            throw new IllegalArgumentException("partition " + partition + " of " + spec.numPartitions);
        }
        current = partition;
    }

    /** Ends the record begun last: its partition's batch goes out once full, and the memory bound is kept. */
    public void endRecord() {
        int partition = current;
        current = -1;
        boolean full = buffers.endRecords(partition, 1); // counted first, whatever pushes it
        if (pushAfterRecord) {
            pushAfterRecord = false;
            pushBuffered();
        } else if (full) {
            pushPartition(partition);
        } else if (bufferedBytes() > maxBuffered) {
            pushBuffered();
        }
    }

    /** Adds one serialized record for a partition. */
    public void write(int partition, byte[] data, int offset, int length) {
        write(partition, data, offset, length, 1);
    }

    /** Adds serialized records (whole records only, {@code count} of them) for a partition. */
    public void write(int partition, byte[] data, int offset, int length, int count) {
        if (buffers.wouldOverflow(partition, length)) pushPartition(partition);
        if (buffers.append(partition, data, offset, length, count)) {
            pushPartition(partition);
        } else if (bufferedBytes() > maxBuffered) {
            pushBuffered();
        }
    }

    /**
     * Bytes held in partition buffers now. Bounded by {@code estuary.client.push.maxBufferedBytes} plus one record,
     * whatever the number of partitions.
     */
    public long bufferedBytes() {
        return buffers.heldBytes() + queued.bytes();
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
        if (current >= 0) { // a half-written record must not be cut into two batches: push once it ends
            pushAfterRecord = true;
            return 0;
        }
        long before = bufferedBytes();
        long t0 = clock.nanos();
        queued.sendAll();
        pushRemainderMerged();
        buffers.freeAll();
        earlyPushes++;
        writeNanos += clock.nanos() - t0;
        return before - bufferedBytes();
    }

    private LocationTable table() {
        if (table == null) {
            table = port.register(spec, stageId, stageAttempt, indeterminate);
            sender.useTable(table);
        }
        return table;
    }

    private void pushPartition(int partition) {
        long t0 = clock.nanos();
        table(); // register the shuffle before encoding, so a failure leaves no batch to release
        sender.pushBatch(partition, buffers.take(partition, written));
        writeNanos += clock.nanos() - t0;
    }

    /**
     * Pushes {@code data} ({@code count} records) as a batch of its own, after whatever the partition had buffered.
     * For serializers whose streams cannot be concatenated: each batch then holds exactly one serialization stream.
     */
    public void writeBatch(int partition, byte[] data, int offset, int length, int count) {
        if (!buffers.isEmpty(partition)) pushPartition(partition);
        long t0 = clock.nanos();
        table();
        ByteBuf batch = written.encode(partition, data, offset, length, count);
        if (batch.readableBytes() >= bufferSize) {
            sender.pushBatch(partition, batch);
        } else {
            // Small: it waits for other small batches to the same worker; its bytes count as held.
            queued.add(table.get(partition), batch);
        }
        writeNanos += clock.nanos() - t0;
        if (bufferedBytes() > maxBuffered) pushBuffered();
    }

    /**
     * Pushes what is buffered, waits until every push is acknowledged and tells the driver this attempt ended.
     * Returns the bytes written per partition.
     */
    public long[] finish() throws RemoteException {
        long t0 = clock.nanos();
        try {
            return finishNow();
        } finally {
            writeNanos += clock.nanos() - t0;
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
        queued.sendAll();
        pushRemainderMerged();
        sender.awaitAll(awaitMs);
        int winner =
                port.mapperEnd(spec, table, stageId, stageAttempt, indeterminate, mapId, attemptId, written.stats());
        if (sender.congestedAcks() > 0) {
            LOG.info(
                    "Map {} attempt {} of {}: workers said its application pushes too fast {} times; its pushes were held "
                            + "back {} ms in all",
                    mapId,
                    attemptId,
                    spec,
                    sender.congestedAcks(),
                    sender.congestionHeldMs());
        }
        if (winner != attemptId) {
            LOG.info(
                    "Map {} attempt {} of {} ended after attempt {}; its output is ignored",
                    mapId,
                    attemptId,
                    spec,
                    winner);
        }
        return written.bytes();
    }

    private void pushRemainderMerged() {
        // table() only when something is buffered: a map that wrote nothing registers nothing.
        for (List<PartitionLocation> parts :
                remaindersByWorker(buffers.fill(), p -> table().get(p)).values()) {
            List<ByteBuf> group = new ArrayList<>();
            List<PartitionLocation> locs = new ArrayList<>();
            long size = 0;
            for (PartitionLocation loc : parts) {
                ByteBuf b = buffers.take(loc.getPartitionId(), written);
                if (size > 0 && (size + b.readableBytes() > mergedSize || group.size() >= PushMergedData.MAX_ENTRIES)) {
                    try {
                        sender.sendMerged(
                                locs, group); // releases the group if it throws (e.g. the task was interrupted)
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
            if (!group.isEmpty()) sender.sendMerged(locs, group);
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
            byWorker.computeIfAbsent(Push.workerKey(loc.getWorker()), k -> new ArrayList<>())
                    .add(loc);
        }
        return byWorker;
    }

    /** Acknowledgements that told this writer to slow down. */
    public long congestedAcks() {
        return sender.congestedAcks();
    }

    /**
     * Milliseconds, summed over pushes, that acknowledged pushes held their permits back because a worker said this
     * application pushes too fast (pushes held at the same time each count). Logged at the end of a map that was
     * held back.
     */
    public long congestionHeldMs() {
        return sender.congestionHeldMs();
    }

    /** Stops retrying; data already pushed by this attempt is ignored by readers since the attempt never ends. */
    public void abort() {
        sender.abort();
        queued.releaseAll();
    }

    /** Whether a push found the stage already ended (this attempt lost the race to another). */
    public boolean stageEnded() {
        return sender.stageEnded();
    }
}
