package io.estuary.worker.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Small committed partition files held in memory, so that reading one never waits behind its disk's read queue.
 * A bounded LRU keyed by the {@link CommittedFile} itself (identity): a file committed again, or restored, is a
 * different key and never served stale bytes.
 *
 * <p>Filling is two steps: {@link #startFill} claims a file (cheap, at commit), then {@link #fill} reads it once
 * (blocking file I/O, on the disk's reader threads). {@link #removeShuffle} drops a shuffle's entries and its
 * claims, so a fill that finishes after its shuffle was removed is thrown away instead of kept.
 *
 * <p>Memory: each entry is one direct buffer, counted in the {@link MemoryTracker} from allocation until it is
 * evicted. The cache never makes the worker pause pushes: an entry is kept only while the tracker holds less than
 * its resume watermark (cache included), and whenever the tracker reports holding at or above that watermark the
 * cache evicts its least recently read entries until it is below, or empty ({@link CacheShrinker}: listeners
 * must not block). Capacity is at most {@link #MAX_SHARE_OF_LIMIT} of the tracker's limit. A chunk being sent keeps
 * its entry's buffer alive after eviction (its slice holds a reference), briefly and uncounted.
 *
 * <p>Held replicas ({@link #hold}): a replica copy of a small partition is kept here at its commit instead of being
 * written to disk: it is read only if its primary is lost, and writing it costs a file and a page-cache copy on the
 * cores the engine uses. A held entry is counted like any other, is never dropped by eviction or pressure but written
 * back instead (on its disk's flusher; once written it is an ordinary entry), and is written back whole on a graceful
 * stop ({@link #writeBackHeld}). A crash loses it: the worker's record of the file then finds no file at restart
 * and reports the copy lost, so readers go to the primary. The primary copy of a replicated small partition is held
 * the same way from its commit until its write, started at once, is done: its commit does not wait for the disk.
 * Held copies being written may take the room they will leave, so the cache can pass its capacity by those bytes
 * until their writes end and it shrinks again.
 *
 * <p>Thread-safe: one lock guards the entries, the claims and the byte count; buffers are released, the tracker
 * told and write-backs started outside it. Callers of {@link #chunk} own the slice they get and release it once.
 */
public final class PartitionCache implements AutoCloseable {
    /** The most of the worker's memory limit the cache may take, whatever is configured. */
    public static final double MAX_SHARE_OF_LIMIT = 0.2;

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(PartitionCache.class);

    private final MemoryTracker memory;
    private final ByteBufAllocator alloc;
    private final long capacity;
    private final long maxPartitionSize;
    /** In access order: the first entry is the least recently read. */
    private final LinkedHashMap<CommittedFile, CacheEntry> entries = new LinkedHashMap<>(64, 0.75f, true);
    /** Files claimed by {@link #startFill} and not yet filled, with their shuffle. */
    private final Map<CommittedFile, String> filling = new HashMap<>();

    private long bytes;
    /** Bytes of held entries whose write is under way: they leave the held state (and can be evicted) once written. */
    private long writing;

    private boolean closed;
    private final CacheCounters counters = new CacheCounters();

    /**
     * @param maxBytes the configured capacity, lowered to {@link #MAX_SHARE_OF_LIMIT} of the tracker's limit; 0 (or
     *     {@code enabled} false) makes a cache that holds nothing
     * @param maxPartitionSize files larger than this are never cached
     */
    public PartitionCache(MemoryTracker memory, boolean enabled, long maxBytes, long maxPartitionSize) {
        this(memory, enabled, maxBytes, maxPartitionSize, PooledByteBufAllocator.DEFAULT);
    }

    /** With the allocator of the entries' direct buffers (tests count their references). */
    PartitionCache(
            MemoryTracker memory, boolean enabled, long maxBytes, long maxPartitionSize, ByteBufAllocator alloc) {
        this.memory = memory;
        this.alloc = alloc;
        this.capacity = enabled ? Math.max(0, Math.min(maxBytes, (long) (memory.limit() * MAX_SHARE_OF_LIMIT))) : 0;
        this.maxPartitionSize = maxPartitionSize;
    }

    /** Whether this cache can hold anything. */
    public boolean enabled() {
        return capacity > 0;
    }

    /** Whether a committed file of this length is small enough to cache. */
    public boolean accepts(long length) {
        return length > 0 && length <= maxPartitionSize && length <= capacity && length <= Integer.MAX_VALUE;
    }

    /** Claims {@code file} of {@code shuffleKey} for a {@link #fill}; false when it is not to be cached (or is). */
    public synchronized boolean startFill(String shuffleKey, CommittedFile file) {
        if (closed || !accepts(file.length()) || entries.containsKey(file) || filling.containsKey(file)) return false;
        if (memory.held() + file.length() >= memory.watermarks().resume()) return false; // no room: not worth a read
        filling.put(file, shuffleKey);
        return true;
    }

    /** Gives up a claim without reading (e.g. the reader threads refused the task). */
    public synchronized void abandonFill(CommittedFile file) {
        filling.remove(file);
    }

    /**
     * Reads a claimed file into memory and keeps it; blocking file I/O. Returns whether it was kept: not when the
     * claim was dropped meanwhile (shuffle removed), memory is short, or the file cannot be read whole.
     */
    public boolean fill(CommittedFile file) {
        int len = (int) file.length();
        ByteBuf buf = null;
        boolean kept = false;
        try {
            synchronized (this) {
                if (!filling.containsKey(file)) return false;
            }
            if (memory.held() + len >= memory.watermarks().resume()) return false;
            buf = alloc.directBuffer(len, len);
            memory.add(len);
            file.readInto(buf);
            kept = keep(file, buf, null, false, () -> filling.remove(file)); // if the claim still stands
            return kept;
        } catch (IOException | RuntimeException | OutOfMemoryError e) {
            // Not cached: readers get the file from disk, which reports its own failure if it has one.
            LOG.debug("Not caching {}: {}", file.file(), e.toString());
            return false;
        } finally {
            if (!kept) {
                abandonFill(file);
                if (buf != null) {
                    buf.release();
                    memory.release(len);
                }
            }
        }
    }

    /**
     * Keeps {@code buf} as {@code file}'s entry if {@code claim} (asked under the lock) names its shuffle (null: keep
     * nothing) and it fits below the capacity and the tracker's resume mark, the oldest entries evicted to make room.
     * A held copy ({@code writeBack} set) may also take the room of held entries on their way to disk: the cache is
     * then over its capacity by at most those, until they are written and evicted. {@code writeNow}: the held copy's
     * write starts at once.
     */
    private boolean keep(
            CommittedFile file,
            ByteBuf buf,
            CacheEntry.WriteBack writeBack,
            boolean writeNow,
            java.util.function.Supplier<String> claim) {
        List<ByteBuf> victims = new ArrayList<>();
        List<Map.Entry<CommittedFile, CacheEntry>> writes = new ArrayList<>();
        boolean kept = false;
        synchronized (this) {
            String shuffleKey = claim.get();
            if (shuffleKey != null && !closed && buf.capacity() <= capacity) {
                // A copy written at once is itself on its way out: it takes no room for long.
                long own = writeBack != null && writeNow ? buf.capacity() : 0;
                long freed = evictOldest(capacity - buf.capacity() + own, victims, writes);
                long room = capacity + (writeBack != null ? writing + own : 0);
                // held counts this buffer already, and still the victims (released below)
                if (bytes + buf.capacity() <= room
                        && memory.held() - freed < memory.watermarks().resume()) {
                    CacheEntry e = new CacheEntry(shuffleKey, buf, writeBack);
                    entries.put(file, e);
                    bytes += buf.capacity();
                    if (writeBack != null) counters.heldBytes.add(buf.capacity());
                    if (writeBack != null && writeNow && claim(e))
                        writes.add(new java.util.AbstractMap.SimpleImmutableEntry<>(file, e));
                    kept = true;
                }
            }
        }
        release(victims);
        startWrites(writes);
        return kept;
    }

    /**
     * Evicts least recently read entries until at most {@code target} bytes are held, held entries being written
     * counting as gone; returns the bytes freed. A held entry is not evicted: its write is started instead (added to
     * {@code writes}, to start outside the lock).
     */
    private long evictOldest(long target, List<ByteBuf> victims, List<Map.Entry<CommittedFile, CacheEntry>> writes) {
        long freed = 0;
        Iterator<Map.Entry<CommittedFile, CacheEntry>> it = entries.entrySet().iterator();
        while (bytes - writing > target && it.hasNext()) {
            Map.Entry<CommittedFile, CacheEntry> me = it.next();
            CacheEntry e = me.getValue();
            if (e.held()) {
                if (claim(e)) writes.add(me);
                continue;
            }
            it.remove();
            e.removed = true;
            bytes -= e.data.capacity();
            freed += e.data.capacity();
            victims.add(e.data);
            counters.evictions.increment();
        }
        return freed;
    }

    /** Claims a held entry's write ({@link CacheEntry#claimWriteBack}), counting it as under way; under the lock. */
    private boolean claim(CacheEntry e) {
        if (!e.claimWriteBack()) return false;
        writing += e.data.capacity();
        return true;
    }

    /**
     * Keeps {@code data}, the whole of a committed copy not written to disk, in place of its file: the cache takes the
     * buffer and the memory counted for its capacity, and {@code writeBack} writes it at once ({@code writeNow}: a
     * replicated primary), or else when the cache needs the room or at a graceful stop (a replica). Until written it is
     * never evicted. False (nothing taken) when the cache is off or closed, the partition is too large to cache, or it
     * does not fit without passing the cache's capacity (less what is on its way to disk) or the tracker's resume
     * mark: the caller writes it as usual.
     */
    boolean hold(
            String shuffleKey, CommittedFile file, ByteBuf data, CacheEntry.WriteBack writeBack, boolean writeNow) {
        return accepts(file.length())
                && keep(file, data, writeBack, writeNow, () -> entries.containsKey(file) ? null : shuffleKey);
    }

    /** Starts the write-backs claimed under the lock ({@link CacheEntry#claimWriteBack}: their slices taken). */
    private void startWrites(List<Map.Entry<CommittedFile, CacheEntry>> writes) {
        for (Map.Entry<CommittedFile, CacheEntry> me : writes) {
            CacheEntry e = me.getValue();
            e.writeBack.start(e.takeClaimed()).whenComplete((v, ex) -> writeBackDone(me.getKey(), e, ex));
        }
    }

    /**
     * A held entry's write finished: it becomes an ordinary entry (evicted as usual; the cache shrinks at once if it is
     * over its marks). After a failure it stays held, to be tried again when room is needed next (a full file system),
     * unless its file is lost (its disk failed): then it is dropped. An entry removed meanwhile went with its shuffle,
     * whose writer deletes the file (and refuses to create it once deleted).
     */
    private void writeBackDone(CommittedFile file, CacheEntry e, Throwable error) {
        List<ByteBuf> victims = new ArrayList<>();
        boolean removed;
        boolean stopped;
        CompletableFuture<Void> written;
        synchronized (this) {
            written = e.written;
            removed = e.removed; // not entries.get: that would make it the most recently read
            stopped = closed;
            if (!removed) writing -= e.data.capacity(); // a removed entry stopped counting when it went
            if (!removed && (error == null || file.lostReason() != null)) {
                counters.heldBytes.add(-e.data.capacity());
                e.writeBack = null;
                if (error != null) {
                    entries.remove(file);
                    e.removed = true;
                    bytes -= e.data.capacity();
                    victims.add(e.data);
                }
            } else if (!removed) {
                e.written = null;
            }
        }
        if (error == null && !removed) counters.writeBacks.increment();
        else if (!removed && !stopped)
            LOG.warn("Writing held copy {} to disk failed: {}", file.file(), error.toString());
        release(victims);
        written.complete(null);
        if (!removed && error == null) shrink();
    }

    /**
     * Writes every held entry to disk (a graceful stop: the worker's record of each says its file is there); completes
     * when all are written or failed.
     */
    public CompletableFuture<Void> writeBackHeld() {
        List<Map.Entry<CommittedFile, CacheEntry>> writes = new ArrayList<>();
        List<CompletableFuture<Void>> all = new ArrayList<>();
        synchronized (this) {
            for (Map.Entry<CommittedFile, CacheEntry> me : entries.entrySet()) {
                CacheEntry e = me.getValue();
                if (!e.held()) continue;
                if (claim(e)) writes.add(me);
                all.add(e.written);
            }
        }
        startWrites(writes);
        return CompletableFuture.allOf(all.toArray(new CompletableFuture[0]));
    }

    private void release(List<ByteBuf> victims) {
        for (ByteBuf b : victims) {
            int n = b.capacity();
            b.release();
            memory.release(n);
        }
    }

    /** Whether {@code file} is in memory now. */
    public synchronized boolean contains(CommittedFile file) {
        return entries.containsKey(file);
    }

    /**
     * Chunk {@code index} of {@code file} as a slice the caller owns (it keeps the entry's buffer alive until
     * released), or null when the file is not cached. Counts a hit, or a miss for a file small enough to cache.
     */
    public ByteBuf chunk(CommittedFile file, int index) {
        return slice(file, file.chunkOffset(index), file.chunkLength(index));
    }

    /** Bytes [offset, offset + length) of {@code file}, as {@link #chunk} does for a whole chunk. */
    public ByteBuf slice(CommittedFile file, long offset, long length) {
        if (capacity == 0) return null;
        synchronized (this) {
            CacheEntry e = entries.get(file); // marks it recently read
            if (e != null) {
                counters.hits.increment();
                return e.data.retainedSlice((int) offset, (int) length);
            }
        }
        if (accepts(file.length())) counters.misses.increment();
        return null;
    }

    /** Drops every entry and pending fill of a shuffle (it was removed). */
    public void removeShuffle(String shuffleKey) {
        List<ByteBuf> victims = new ArrayList<>();
        synchronized (this) {
            filling.values().removeIf(shuffleKeyOf -> shuffleKeyOf.equals(shuffleKey));
            Iterator<CacheEntry> it = entries.values().iterator();
            while (it.hasNext()) {
                CacheEntry e = it.next();
                if (!e.shuffleKey.equals(shuffleKey)) continue;
                it.remove();
                e.removed = true;
                bytes -= e.data.capacity();
                if (e.held()) counters.heldBytes.add(-e.data.capacity());
                if (e.held() && e.written != null) writing -= e.data.capacity();
                victims.add(e.data);
            }
        }
        release(victims);
    }

    /**
     * Evicts least recently read entries until the cache is within its capacity (held copies being written may have
     * taken it past) and the tracker holds less than its resume watermark, or none are left; held entries in the way
     * are written back first.
     */
    public void shrink() {
        List<ByteBuf> victims = new ArrayList<>();
        List<Map.Entry<CommittedFile, CacheEntry>> writes = new ArrayList<>();
        synchronized (this) {
            long target = capacity;
            long excess = memory.held() - memory.watermarks().resume() + 1;
            if (excess > 0) target = Math.min(target, Math.max(0, bytes - excess));
            if (bytes > target) evictOldest(target, victims, writes);
        }
        release(victims);
        startWrites(writes);
    }

    public synchronized long bytes() {
        return bytes;
    }

    public synchronized int entries() {
        return entries.size();
    }

    public CacheCounters counters() {
        return counters;
    }

    /** Most bytes held (0 when disabled). */
    public long capacity() {
        return capacity;
    }

    /** Releases every entry; the cache holds nothing afterwards. Chunks being sent keep their own references. */
    @Override
    public void close() {
        List<ByteBuf> victims = new ArrayList<>();
        synchronized (this) {
            closed = true;
            filling.clear();
            for (CacheEntry e : entries.values()) {
                e.removed = true;
                victims.add(e.data);
            }
            entries.clear();
            bytes = 0;
            writing = 0;
            counters.heldBytes.reset();
        }
        release(victims);
    }
}
