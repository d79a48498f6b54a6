package io.estuary.worker.storage;

import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.common.time.Clock;
import io.estuary.network.netty.NettyUtils;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

/**
 * The off-heap buffer where one partition's pushes gather before they go to the disk's flusher, and its accounting:
 * the memory tracker counts the buffer's capacity (what is really held) as it grows, and the buffer dates its oldest
 * byte. It is handed over whole ({@link #take}) or dropped ({@link #drop}); the next push starts a new one.
 *
 * <p>Sizing, so that bytes are copied once on their way in: a partition's first buffer starts small and doubles (most
 * partitions of a wide shuffle never fill one), and a push that would take a buffer past the flush threshold goes
 * into the next buffer instead ({@link #wouldOverflow}). Once the partition has filled a buffer, each next one is
 * allocated at the threshold outright: growing from small would copy every byte about once more.
 *
 * <p>Not thread-safe: its {@link PartitionFileWriter} calls it under the writer's lock.
 */
final class FlushBuffer {
    private static final PooledByteBufAllocator ALLOC = NettyUtils.allocator();
    /**
     * A partition's first buffer: small, because a wide shuffle touches tens of thousands of partitions with a few
     * hundred bytes each; at 16 KiB, 20,000 of them held 320 MiB for 4 MiB of data, and one merged push read while
     * paused could add 80 MiB. Growing by doubling copies each byte at most about once more, whatever the start.
     */
    static final int INITIAL_BUFFER = 1024;

    private final String name;
    private final MemoryTracker memory;
    private final int flushThreshold;
    private final Clock clock;

    private ByteBuf buf;
    /** Capacity of {@code buf} counted in the memory tracker. */
    private int counted;

    /** Bytes at the buffer's start already handed out by {@link #unqueued} (a tail carried over by {@link #takeAligned}). */
    private int queued;

    private long sinceNanos;
    /** Whether this partition has filled a buffer before (its next buffers start at the flush threshold). */
    private boolean large;

    FlushBuffer(String name, MemoryTracker memory, int flushThreshold, Clock clock) {
        this.name = name;
        this.memory = memory;
        this.flushThreshold = flushThreshold;
        this.clock = clock;
    }

    /**
     * Makes room for {@code n} more bytes, counting any growth in the memory tracker. Fails with {@code RETRY_LATER}
     * when Netty's direct memory is exhausted: the push waits, the worker lives.
     */
    void reserve(int n) {
        try {
            if (buf == null) {
                // Small at first: with thousands of partitions open, buffers sized for a full flush would hold the
                // memory limit before any fills. It doubles as data arrives.
                buf = ALLOC.directBuffer(
                        Math.max(n, large ? flushThreshold : Math.min(flushThreshold, INITIAL_BUFFER)));
                sinceNanos = clock.nanos();
            }
            buf.ensureWritable(n);
        } catch (OutOfMemoryError e) {
            throw new StatusException(
                    StatusCode.RETRY_LATER,
                    name + ": no direct memory for " + n + " more bytes (" + memory.held() + " held): "
                            + e.getMessage());
        } finally {
            countCapacity();
        }
    }

    private void countCapacity() {
        int cap = buf == null ? 0 : buf.capacity();
        if (cap != counted) {
            memory.add(cap - counted);
            counted = cap;
        }
    }

    /** Copies {@code data} in (room {@link #reserve reserved} first); the caller still owns {@code data}. */
    void write(ByteBuf data) {
        buf.writeBytes(data);
    }

    /**
     * Whether {@code n} more bytes would take a buffer that holds some past the flush threshold: then it should go to
     * the flusher first, and the bytes start the next one (no regrowth, no copy of what it holds).
     */
    boolean wouldOverflow(int n) {
        return readable() > 0 && (long) readable() + n > flushThreshold;
    }

    /** Whether it holds a flush buffer's worth and should go to the flusher. */
    boolean full() {
        return readable() >= flushThreshold;
    }

    /** Bytes buffered, not yet handed over. */
    int readable() {
        return buf == null ? 0 : buf.readableBytes();
    }

    /** The memory the buffer holds, as counted in the memory tracker. */
    int counted() {
        return counted;
    }

    /** When the oldest byte buffered arrived (the clock's nanos), or 0 when nothing is buffered. */
    long sinceNanos() {
        return readable() == 0 ? 0 : sinceNanos;
    }

    /**
     * The bytes not handed out by an earlier call, in order: what goes to the file's checksum as the buffer is queued
     * for writing. A slice: valid while the buffer is held.
     */
    ByteBuf unqueued() {
        if (buf == null) return io.netty.buffer.Unpooled.EMPTY_BUFFER;
        ByteBuf b = buf.slice(buf.readerIndex() + queued, buf.readableBytes() - queued);
        queued = buf.readableBytes();
        return b;
    }

    /**
     * For a direct write: hands over the buffer cut to a multiple of {@code alignment}, its tail (the rest) copied to
     * the start of a new buffer that stays here. Null, and nothing changed, when it holds fewer bytes than
     * {@code alignment} or there is no direct memory for the tail. The caller takes the buffer's {@link #counted}
     * memory (read before this call) with it; the new buffer is counted anew.
     */
    ByteBuf takeAligned(int alignment, boolean filled) {
        int n = readable();
        int head = n - n % alignment;
        if (head == 0) return null;
        ByteBuf next = null;
        int tail = n - head;
        if (tail > 0) {
            // After a full buffer of a large partition, the next is allocated whole (as reserve would); after an early
            // flush, only as much as the tail needs, so that the flush frees memory.
            boolean whole = filled && (large || n >= flushThreshold / 2);
            try {
                next = ALLOC.directBuffer(
                        Math.max(tail, whole ? flushThreshold : Math.min(flushThreshold, INITIAL_BUFFER)));
            } catch (OutOfMemoryError e) {
                return null;
            }
            next.writeBytes(buf, buf.readerIndex() + head, tail);
        }
        ByteBuf b = take(filled);
        b.writerIndex(b.readerIndex() + head);
        if (next != null) {
            buf = next;
            queued = tail;
            // Dated now: dated with the bytes it came with, an early flush for age would write it at once, unaligned.
            sinceNanos = clock.nanos();
            countCapacity();
        }
        return b;
    }

    /**
     * Hands the buffer over (null when none): the caller takes its {@link #counted} memory with it and releases both.
     */
    ByteBuf take() {
        return take(false);
    }

    /**
     * As {@link #take()}; {@code filled}: handed over because it filled up (not early, under memory pressure or for
     * age), which says whether the partition is one that fills its buffers.
     */
    ByteBuf take(boolean filled) {
        ByteBuf b = buf;
        if (filled && b != null) large = b.readableBytes() >= flushThreshold / 2;
        buf = null;
        counted = 0;
        queued = 0;
        return b;
    }

    /** Releases the buffer and its memory; returns the bytes it held, now lost. */
    long drop() {
        if (buf == null) return 0;
        long lost = buf.readableBytes();
        memory.release(counted);
        counted = 0;
        buf.release();
        buf = null;
        queued = 0;
        return lost;
    }
}
