package io.estuary.worker.fetch;

import io.estuary.common.config.WorkerConfig;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.common.time.Clock;
import io.estuary.network.auth.Authorizer;
import io.estuary.network.auth.Identity;
import io.estuary.network.buffer.ManagedBuffer;
import io.estuary.network.server.StreamManager;
import io.estuary.worker.storage.CommittedFile;
import io.estuary.worker.storage.Disk;
import io.estuary.worker.storage.DiskReaders;
import io.estuary.worker.storage.FileSegments;
import io.estuary.worker.storage.PartitionCache;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Streams opened by readers: each is a committed file read chunk by chunk. A stream is dropped once its last chunk
 * is asked for, when its reader closes it, when its connection closes, or when it idled for the stream timeout
 * ({@link #dropIdle}). A chunk of a stream not (or no longer) held is refused with {@code UNKNOWN_STREAM}: the
 * reader opens the stream again, which is cheap, and goes on from that chunk.
 *
 * <p>A chunk's file is opened and checked on its disk's reader threads ({@link Disk#readers()}), never on the
 * network thread that asked; the open file then goes out zero-copy. A file whose disk failed is refused with
 * {@code DISK_FAILED} (the reader goes to the partition's other copy), and so is a chunk read queued or running on
 * its disk when the disk is declared failed or hung: it is answered then, not when (if ever) the disk returns. A chunk of a partition held in the
 * {@link PartitionCache} is served from memory at once, never queued behind the disk. A connection holds at most
 * {@code maxStreamsPerConnection} streams at once; opening one more is refused with {@code RETRY_LATER}.
 *
 * <p>A stream belongs to the identity that opened it: stream ids are easy to guess, so a chunk fetch on a connection
 * of another identity (other than the cluster's) is refused {@code FORBIDDEN} (anonymous: {@code UNAUTHENTICATED})
 * by the {@link Authorizer}, and leaves the stream as it was; a close from another connection is ignored (and, from
 * another identity, counted as refused). Thread-safe.
 */
public final class StreamRegistry implements StreamManager {
    /** Streams open on a connection, kept on the connection itself. */
    private static final AttributeKey<AtomicInteger> OPEN_ON_CHANNEL = AttributeKey.valueOf("estuary.openStreams");

    private static final class OpenStream {
        final CommittedFile file;
        /** What the stream serves: one chunk per segment. */
        final FileSegments segments;

        final Channel channel;
        /** Who opened it, and the application it reads (null when opened without naming one: tests). */
        final Identity opener;

        final String appId;
        volatile long lastUsedNanos;
        private final AtomicInteger openOnChannel; // null without a channel (tests)
        private final AtomicBoolean counted = new AtomicBoolean(true);

        OpenStream(
                CommittedFile file,
                FileSegments segments,
                Channel channel,
                Identity opener,
                String appId,
                AtomicInteger openOnChannel,
                long now) {
            this.opener = opener;
            this.appId = appId;
            this.lastUsedNanos = now;
            this.file = file;
            this.segments = segments;
            this.channel = channel;
            this.openOnChannel = openOnChannel;
        }

        /** Gives its place on the connection back, once, whichever way the stream ends. */
        void ended() {
            if (openOnChannel != null && counted.compareAndSet(true, false)) openOnChannel.decrementAndGet();
        }
    }

    /**
     * A chunk handed to the transport and not yet sent: its disk (for the fetch latency it reports; null when served
     * from memory) and its body (an open file or a cached slice), released here if the transport never took it.
     */
    private static final class Sending {
        final Disk disk;
        final ManagedBuffer body;

        Sending(Disk disk, ManagedBuffer body) {
            this.disk = disk;
            this.body = body;
        }
    }

    private final AtomicLong nextId = new AtomicLong(System.nanoTime() & 0x7fffffffL);
    private final Map<Long, OpenStream> streams = new ConcurrentHashMap<>();
    private final Map<String, Sending> sending = new ConcurrentHashMap<>();
    private final PartitionCache cache;
    private final int maxStreamsPerConnection;
    private final Clock clock;
    private final Authorizer authorizer;

    /** Streams served from disk only, with no limit per connection. */
    public StreamRegistry() {
        this(null, Integer.MAX_VALUE);
    }

    /** Streams served from {@code cache} when it holds their partition (null: disk only). */
    public StreamRegistry(PartitionCache cache) {
        this(cache, Integer.MAX_VALUE);
    }

    public StreamRegistry(int maxStreamsPerConnection) {
        this(null, maxStreamsPerConnection);
    }

    public StreamRegistry(PartitionCache cache, int maxStreamsPerConnection) {
        this(cache, maxStreamsPerConnection, Clock.system());
    }

    /** {@code clock} tells how long a stream has been idle ({@link #dropIdle}). */
    public StreamRegistry(PartitionCache cache, int maxStreamsPerConnection, Clock clock) {
        this(cache, maxStreamsPerConnection, clock, Authorizer.off("worker-fetch"));
    }

    /** {@code authorizer} decides who may read a stream another connection opened. */
    public StreamRegistry(PartitionCache cache, int maxStreamsPerConnection, Clock clock, Authorizer authorizer) {
        this.authorizer = authorizer;
        this.cache = cache;
        this.maxStreamsPerConnection = maxStreamsPerConnection;
        this.clock = clock;
    }

    /** Opens a stream over every chunk of {@code file}; see {@link #open(CommittedFile, FileSegments, Channel)}. */
    public long open(CommittedFile file, Channel channel) {
        return open(file, file.allChunks(), channel);
    }

    /**
     * Opens a stream serving {@code segments} of {@code file}, one chunk each, for the reader on {@code channel};
     * refused with RETRY_LATER when it holds the most it may.
     */
    public long open(CommittedFile file, FileSegments segments, Channel channel) {
        return open(file, segments, channel, null);
    }

    /**
     * As {@link #open(CommittedFile, FileSegments, Channel)}, for a reader of application {@code appId}: the stream
     * belongs to the identity of {@code channel}.
     */
    public long open(CommittedFile file, FileSegments segments, Channel channel, String appId) {
        AtomicInteger open = null;
        if (channel != null) {
            open = channel.attr(OPEN_ON_CHANNEL).setIfAbsent(new AtomicInteger());
            if (open == null) open = channel.attr(OPEN_ON_CHANNEL).get();
            if (open.incrementAndGet() > maxStreamsPerConnection) {
                open.decrementAndGet();
                throw new StatusException(
                        StatusCode.RETRY_LATER,
                        "connection " + channel.remoteAddress() + " already has "
                                + maxStreamsPerConnection + " streams open, the most "
                                + WorkerConfig.MAX_STREAMS_PER_CONNECTION.key()
                                + " allows; read or close some first");
            }
        }
        long id = nextId.incrementAndGet();
        streams.put(
                id,
                new OpenStream(file, segments, channel, authorizer.identityOf(channel), appId, open, clock.nanos()));
        return id;
    }

    private void remove(long streamId) {
        OpenStream s = streams.remove(streamId);
        if (s != null) s.ended();
    }

    /** Where a file's I/O runs: its disk's reader threads (inline only for a file without a disk, in tests). */
    static Executor readersOf(CommittedFile file) {
        return file.disk() == null ? Runnable::run : file.disk().readers();
    }

    /**
     * Runs {@code read}, a file's I/O, on its disk's reader threads (inline only for a file without a disk, in tests);
     * if the disk fails while the read waits or runs, {@code giveUp} answers its reader instead ({@link DiskReaders}).
     */
    static void onReaders(CommittedFile file, Runnable read, Consumer<String> giveUp) {
        if (file.disk() == null) read.run();
        else file.disk().readers().execute(read, giveUp);
    }

    /** Opens the chunk on the caller's thread (tests); the transport uses {@link #getChunkAsync}. */
    @Override
    public ManagedBuffer getChunk(long streamId, int chunkIndex) {
        try {
            return getChunkAsync(streamId, chunkIndex).join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException) throw (RuntimeException) e.getCause();
            throw e;
        }
    }

    @Override
    public CompletableFuture<ManagedBuffer> getChunkAsync(long streamId, int chunkIndex) {
        return getChunkAsync(null, streamId, chunkIndex);
    }

    /** {@code channel}: the reader's connection, whose identity must own the stream (null: not checked, tests). */
    @Override
    public CompletableFuture<ManagedBuffer> getChunkAsync(Channel channel, long streamId, int chunkIndex) {
        OpenStream s = streams.get(streamId);
        if (s != null && channel != null && s.channel != channel) {
            authorizer.checkStream(channel, "fetch_chunk", streamId, s.opener, s.appId);
        }
        if (s == null) {
            throw new StatusException(
                    StatusCode.UNKNOWN_STREAM,
                    "unknown stream " + streamId + " (never opened, finished, " + "closed, or dropped after idling for "
                            + WorkerConfig.STREAM_TIMEOUT.key() + ")");
        }
        int numChunks = s.segments.count();
        if (chunkIndex < 0 || chunkIndex >= numChunks) {
            throw new IllegalArgumentException("stream " + streamId + " has " + numChunks + " chunks; " + "chunk "
                    + chunkIndex + " does not exist");
        }
        String lost = s.file.lostReason();
        if (lost != null) {
            remove(streamId);
            throw new StatusException(
                    StatusCode.DISK_FAILED,
                    "chunk " + chunkIndex + " of stream " + streamId + " (" + s.file.file() + ") is lost: " + lost);
        }
        s.lastUsedNanos = clock.nanos();
        if (chunkIndex == numChunks - 1) remove(streamId);
        long offset = s.segments.offset(chunkIndex);
        long length = s.segments.length(chunkIndex);
        ByteBuf cached = cache == null ? null : cache.slice(s.file, offset, length);
        if (cached != null) {
            CachedChunk chunk = new CachedChunk(cached);
            sending.put(streamId + "/" + chunkIndex, new Sending(null, chunk));
            return CompletableFuture.completedFuture(chunk);
        }
        CompletableFuture<ManagedBuffer> out = new CompletableFuture<>();
        Runnable read = () -> {
            try {
                OpenFileSegment seg = OpenFileSegment.open(s.file.file(), offset, length);
                String key = streamId + "/" + chunkIndex;
                sending.put(key, new Sending(s.file.disk(), seg));
                if (!out.complete(seg)) { // given up while the disk hung: the reader has its answer, nothing is sent
                    Sending unsent = sending.remove(key);
                    if (unsent != null) unsent.body.release();
                }
            } catch (IOException | RuntimeException e) {
                remove(streamId);
                out.completeExceptionally(new StatusException(
                        StatusCode.DISK_FAILED,
                        "chunk " + chunkIndex + " of stream " + streamId + ": " + e.getMessage()));
            }
        };
        try {
            onReaders(s.file, read, why -> {
                remove(streamId);
                out.completeExceptionally(new StatusException(
                        StatusCode.DISK_FAILED,
                        "chunk " + chunkIndex + " of stream " + streamId + " (" + s.file.file() + ") is lost: " + why));
            });
        } catch (RejectedExecutionException e) {
            out.completeExceptionally(new StatusException(StatusCode.RETRY_LATER, "the worker is shutting down"));
        }
        return out;
    }

    @Override
    public void chunkSent(long streamId, int chunkIndex, long nanos, boolean success) {
        Sending s = sending.remove(streamId + "/" + chunkIndex);
        if (s == null) return;
        s.body.release(); // closes the file, or lets the cached slice go, only if the transport never took it
        if (s.disk != null && success) s.disk.recordFetch(nanos);
    }

    /** Drops streams idle for more than {@code idleMs} by the clock; returns how many. */
    public int dropIdle(long idleMs) {
        long now = clock.nanos();
        long idleNanos = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(idleMs);
        int before = streams.size();
        streams.values().removeIf(s -> {
            if (now - s.lastUsedNanos <= idleNanos) return false;
            s.ended();
            return true;
        });
        return before - streams.size();
    }

    /** Drops the stream if {@code channel} opened it (a reader may close only its own streams). */
    @Override
    public void closeStream(Channel channel, long streamId) {
        OpenStream s = streams.get(streamId);
        if (s == null) return;
        if (s.channel != channel) {
            try {
                authorizer.checkStream(channel, "close_stream", streamId, s.opener, s.appId);
            } catch (StatusException e) {
                // counted and logged; a close has no answer, and one from another connection is ignored anyway
            }
            return;
        }
        if (streams.remove(streamId, s)) s.ended();
    }

    public void closeStreamsOf(Channel channel) {
        streams.values().removeIf(s -> {
            if (s.channel != channel) return false;
            s.ended();
            return true;
        });
    }

    public int openStreams() {
        return streams.size();
    }
}
