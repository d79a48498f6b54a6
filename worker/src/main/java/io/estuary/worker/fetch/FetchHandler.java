package io.estuary.worker.fetch;

import io.estuary.common.protocol.OpenStreamRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.StreamHandle;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.common.util.ShuffleKey;
import io.estuary.network.auth.Authorizer;
import io.estuary.network.rpc.ControlRpcHandler;
import io.estuary.network.server.StreamManager;
import io.estuary.worker.partition.PartitionRegistry;
import io.estuary.worker.storage.CommittedFile;
import io.estuary.worker.storage.FileSegments;
import io.estuary.worker.storage.PartitionCache;
import io.netty.channel.Channel;
import java.util.concurrent.RejectedExecutionException;

/**
 * The fetch path: opens a stream over a committed partition file and serves its chunks. Looking the file up is in
 * memory; checking it on disk runs on the disk's reader threads, so a slow or hung disk never blocks a network
 * thread, and the stream handle is sent from there. A file whose disk failed is refused with {@code DISK_FAILED}
 * (also when the disk is declared failed or hung while the open waits for it or runs on it):
 * the reader reads the partition's other copy, or reports the data lost; so is a file that changed on disk while
 * the worker was down (checked, on the reader thread, at the first open after a restart). A partition held in the
 * {@link PartitionCache} is opened and served from memory on the network thread, without touching its disk. A
 * partition no larger than the reader allows ({@code inline_max_bytes}) comes back whole in the answer to the open,
 * with no stream: one round trip instead of two for the many small partitions of small shuffles.
 *
 * <p>Opening a stream needs the identity of the application it names (or the cluster's); the stream then belongs to
 * the identity that opened it ({@link StreamRegistry}). Thread-safe.
 */
public final class FetchHandler extends ControlRpcHandler {
    private final PartitionRegistry registry;
    private final PartitionCache cache;
    private final StreamRegistry streams;
    private final Authorizer authorizer;
    /** Told the size of each partition answered inline (the worker's metrics count it as a chunk sent). */
    private volatile java.util.function.LongConsumer inlineSent = bytes -> {};

    private final java.util.concurrent.ScheduledExecutorService sweeper =
            new io.estuary.common.util.GuardedScheduledExecutor("worker-stream-sweeper");

    /**
     * {@code streamTimeoutMs}: streams without a chunk request for this long are dropped, checked every tenth of it
     * (at most every minute).
     */
    public FetchHandler(
            PartitionRegistry registry,
            PartitionCache cache,
            io.estuary.network.rpc.RequestLimits limits,
            int maxStreamsPerConnection,
            long streamTimeoutMs) {
        this(registry, cache, limits, maxStreamsPerConnection, streamTimeoutMs, io.estuary.common.time.Clock.system());
    }

    public FetchHandler(
            PartitionRegistry registry,
            PartitionCache cache,
            io.estuary.network.rpc.RequestLimits limits,
            int maxStreamsPerConnection,
            long streamTimeoutMs,
            io.estuary.common.time.Clock clock) {
        this(
                registry,
                cache,
                limits,
                maxStreamsPerConnection,
                streamTimeoutMs,
                clock,
                Authorizer.off("worker fetch server"));
    }

    /** With streams opened and read as {@code authorizer} allows. */
    public FetchHandler(
            PartitionRegistry registry,
            PartitionCache cache,
            io.estuary.network.rpc.RequestLimits limits,
            int maxStreamsPerConnection,
            long streamTimeoutMs,
            io.estuary.common.time.Clock clock,
            Authorizer authorizer) {
        super("worker fetch server", limits);
        this.registry = registry;
        this.cache = cache;
        this.authorizer = authorizer;
        this.streams = new StreamRegistry(cache, maxStreamsPerConnection, clock, authorizer);
        long sweepMs = Math.max(1, Math.min(60_000, streamTimeoutMs / 10));
        sweeper.scheduleWithFixedDelay(
                () -> streams.dropIdle(streamTimeoutMs), sweepMs, sweepMs, java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    public void close() {
        sweeper.shutdownNow();
    }

    /** Who hears of each partition answered inline, with its size. */
    public void onInlineSent(java.util.function.LongConsumer listener) {
        this.inlineSent = listener;
    }

    @Override
    protected void handle(Channel channel, Request request, Reply reply) {
        if (request.getPayloadCase() != Request.PayloadCase.OPEN_STREAM) throw unsupported(request);
        OpenStreamRequest r = request.getOpenStream();
        authorizer.checkApplication(channel, "open_stream", r.getAppId());
        String key = ShuffleKey.of(r.getAppId(), r.getShuffleId());
        CommittedFile file = registry.committedFile(key, r.getPartitionId(), r.getEpoch());
        if (file == null) {
            String why = registry.hasShuffle(key)
                    ? "is not committed on this worker"
                    : "is unknown on this worker " + "(unknown application or shuffle, or expired)";
            throw new StatusException(
                    StatusCode.UNKNOWN_LOCATION,
                    "partition " + r.getPartitionId() + " epoch " + r.getEpoch() + " of shuffle " + key + " " + why);
        }
        String lost = file.lostReason();
        if (lost != null) {
            throw new StatusException(
                    StatusCode.DISK_FAILED,
                    "partition " + r.getPartitionId() + " epoch " + r.getEpoch() + " of shuffle " + key
                            + " is lost on this worker: " + lost);
        }
        // A map-range read is served only the parts of the file that may hold those maps (all of it without an index).
        FileSegments segments = file.segmentsFor(r.getStartMap(), r.getEndMap());
        if (segments.count() == 0) {
            reply.ok(StreamHandle.newBuilder()
                    .setStreamId(-1)
                    .setNumChunks(0)
                    .setTotalBytes(0)
                    .build());
            return;
        }
        if (cache.contains(file)) { // in memory: nothing to check on disk, no wait behind its readers
            StreamHandle inline = inlineFromCache(file, segments, r.getInlineMaxBytes());
            if (inline != null) {
                reply.ok(inline);
                return;
            }
            long id = streams.open(file, segments, channel, r.getAppId());
            reply.ok(handle(id, segments));
            return;
        }
        // Answered once: by the open, or, if the disk is declared failed (hung) first, by the give-up.
        java.util.concurrent.atomic.AtomicBoolean answered = new java.util.concurrent.atomic.AtomicBoolean();
        try {
            StreamRegistry.onReaders(file, () -> openOnDisk(channel, r, file, segments, reply, answered), why -> {
                if (answered.compareAndSet(false, true)) {
                    reply.fail(
                            StatusCode.DISK_FAILED,
                            "partition " + r.getPartitionId() + " epoch " + r.getEpoch() + " of shuffle " + key
                                    + " is lost on this worker: " + why);
                }
            });
        } catch (RejectedExecutionException e) {
            reply.fail(StatusCode.RETRY_LATER, "the worker is shutting down");
        }
    }

    /**
     * The most a partition answered inline may hold, whatever a reader asks: an answer is one control frame, copied
     * into the worker's heap (a reader's own limit is at most this too).
     */
    static final int MAX_INLINE_BYTES = 1 << 20;

    /**
     * Whether the reader takes {@code segments} inline: it allowed at most {@code maxBytes} (never above
     * {@link #MAX_INLINE_BYTES}), and they are no more.
     */
    private static boolean inlined(FileSegments segments, int maxBytes) {
        return maxBytes > 0 && segments.totalBytes() <= Math.min(maxBytes, MAX_INLINE_BYTES);
    }

    /**
     * The whole of {@code segments} in the answer (no stream, no chunk request), from the cache; null when the reader
     * did not ask for it, the parts are larger, or the file left the cache meanwhile.
     */
    private StreamHandle inlineFromCache(CommittedFile file, FileSegments segments, int maxBytes) {
        if (!inlined(segments, maxBytes)) return null;
        byte[] data = new byte[(int) segments.totalBytes()];
        int at = 0;
        for (int i = 0; i < segments.count(); i++) {
            io.netty.buffer.ByteBuf part = cache.slice(file, segments.offset(i), segments.length(i));
            if (part == null) return null;
            try {
                int n = part.readableBytes();
                part.readBytes(data, at, n);
                at += n;
            } finally {
                part.release();
            }
        }
        return inline(data);
    }

    /**
     * As {@link #inlineFromCache}, read from disk on the disk's reader thread; null also when the read fails (a
     * stream is opened then, whose chunk reads meet the same failure and report it as they do).
     */
    private StreamHandle inlineFromDisk(CommittedFile file, FileSegments segments, int maxBytes) {
        if (!inlined(segments, maxBytes)) return null;
        long t0 = System.nanoTime();
        java.nio.ByteBuffer data = java.nio.ByteBuffer.allocate((int) segments.totalBytes());
        try (java.nio.channels.FileChannel ch =
                java.nio.channels.FileChannel.open(file.file().toPath())) {
            for (int i = 0; i < segments.count(); i++) {
                long pos = segments.offset(i);
                long end = pos + segments.length(i);
                while (pos < end) {
                    data.limit((int) (data.position() + (end - pos)));
                    int n = ch.read(data, pos);
                    if (n < 0) return null;
                    pos += n;
                }
            }
        } catch (java.io.IOException e) {
            return null;
        }
        file.disk().recordFetch(System.nanoTime() - t0); // a read from disk, as a chunk's would be: its disk's latency
        return inline(data.array());
    }

    private StreamHandle inline(byte[] data) {
        inlineSent.accept(data.length);
        return StreamHandle.newBuilder()
                .setStreamId(-1)
                .setNumChunks(1)
                .setTotalBytes(data.length)
                .setInlineData(com.google.protobuf.UnsafeByteOperations.unsafeWrap(data))
                .build();
    }

    /** On the disk's reader thread: checks the file is there and whole, then opens the stream. */
    private static StreamHandle handle(long streamId, FileSegments segments) {
        return StreamHandle.newBuilder()
                .setStreamId(streamId)
                .setNumChunks(segments.count())
                .setTotalBytes(segments.totalBytes())
                .build();
    }

    private void openOnDisk(
            Channel channel,
            OpenStreamRequest r,
            CommittedFile file,
            FileSegments segments,
            Reply reply,
            java.util.concurrent.atomic.AtomicBoolean answered) {
        try {
            io.estuary.worker.storage.DiskHangInjection.await(file.file());
        } catch (java.io.InterruptedIOException e) {
            reply.fail(StatusCode.DISK_FAILED, e.getMessage());
            return;
        }
        long onDisk = file.file().length(); // 0 when missing or unreadable
        if (onDisk < file.length()) {
            reply.fail(
                    StatusCode.DISK_FAILED,
                    "partition " + r.getPartitionId() + " epoch " + r.getEpoch() + ": "
                            + file.file() + " holds " + onDisk + " bytes on disk, fewer than the " + file.length()
                            + " committed "
                            + "(deleted or truncated)");
            return;
        }
        // A file committed before a restart is checked against its recorded checksum once, here, before it is served.
        String lost = file.contentUnchecked() ? file.checkRestoredContent() : null;
        if (lost != null) {
            reply.fail(
                    StatusCode.DISK_FAILED,
                    "partition " + r.getPartitionId() + " epoch " + r.getEpoch() + " (" + file.file()
                            + ") is lost on this worker: " + lost);
            return;
        }
        if (channel != null && !channel.isActive()) return; // the reader went away meanwhile
        StreamHandle inline = inlineFromDisk(file, segments, r.getInlineMaxBytes());
        if (!answered.compareAndSet(false, true)) return; // given up while the disk hung: no stream nobody reads
        if (inline != null) {
            reply.ok(inline);
            return;
        }
        long id;
        try {
            id = streams.open(file, segments, channel, r.getAppId());
        } catch (StatusException e) {
            reply.fail(e);
            return;
        }
        reply.ok(handle(id, segments));
    }

    /** Streams open now (for the worker's metrics). */
    public int openStreams() {
        return streams.openStreams();
    }

    @Override
    public StreamManager streamManager() {
        return streams;
    }

    @Override
    public void channelInactive(Channel channel) {
        streams.closeStreamsOf(channel);
    }
}
