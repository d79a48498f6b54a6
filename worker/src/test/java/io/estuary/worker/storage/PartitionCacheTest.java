package io.estuary.worker.storage;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The cache on real files and a real memory tracker: LRU order and bounds, eviction under memory pressure, removal
 * per shuffle (also of a fill in progress), and that every buffer it allocated is released once (each test ends
 * by checking every buffer's reference count is 0).
 */
class PartitionCacheTest {
    /** Hands out unpooled direct buffers and remembers them, so a test can check each was released. */
    static final class CountingAllocator extends AbstractByteBufAllocator {
        final List<ByteBuf> given = new ArrayList<>();

        CountingAllocator() {
            super(true);
        }

        @Override
        protected synchronized ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            ByteBuf b = UnpooledByteBufAllocator.DEFAULT.directBuffer(initialCapacity, maxCapacity);
            given.add(b);
            return b;
        }

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            throw new UnsupportedOperationException("the cache holds direct buffers only");
        }

        @Override
        public boolean isDirectBufferPooled() {
            return false;
        }

        synchronized void assertAllReleased() {
            for (ByteBuf b : given) assertEquals(0, b.refCnt(), "a cached buffer was not released");
        }
    }

    private Path dir;
    private final CountingAllocator alloc = new CountingAllocator();
    private final Random random = new Random(7);

    @BeforeEach
    void setUp() throws Exception {
        dir = Files.createTempDirectory("cache-test");
    }

    @AfterEach
    void tearDown() throws Exception {
        alloc.assertAllReleased();
        try (java.util.stream.Stream<Path> files = Files.list(dir)) {
            files.forEach(f -> f.toFile().delete());
        }
        Files.delete(dir);
    }

    /** A committed file of {@code length} random bytes in two chunks. */
    private CommittedFile file(String name, int length) throws Exception {
        byte[] data = new byte[length];
        random.nextBytes(data);
        File f = dir.resolve(name).toFile();
        Files.write(f.toPath(), data);
        return new CommittedFile(f, new long[] {0, length / 2}, length, null);
    }

    private static boolean cache(PartitionCache c, String shuffle, CommittedFile f) {
        return c.startFill(shuffle, f) && c.fill(f);
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] out = new byte[b.readableBytes()];
        b.getBytes(b.readerIndex(), out);
        return out;
    }

    @Test
    void servesChunksFromMemoryAndEvictsTheLeastRecentlyRead() throws Exception {
        MemoryTracker memory = new MemoryTracker(1 << 20);
        PartitionCache c = new PartitionCache(memory, true, 2500, 1500, alloc);
        CommittedFile a = file("a", 1000);
        CommittedFile b = file("b", 1000);
        CommittedFile big = file("big", 1501);
        assertTrue(cache(c, "s", a));
        assertTrue(cache(c, "s", b));
        assertFalse(c.startFill("s", big), "larger than maxPartitionSize");
        assertFalse(c.startFill("s", a), "already cached");
        assertEquals(2000, c.bytes());
        assertEquals(2000, memory.held(), "entries are counted in the memory tracker");

        // Chunks are the file's bytes; a is now the most recently read.
        byte[] onDisk = Files.readAllBytes(a.file().toPath());
        ByteBuf first = c.chunk(a, 0);
        ByteBuf second = c.chunk(a, 1);
        assertArrayEquals(java.util.Arrays.copyOfRange(onDisk, 0, 500), bytes(first));
        assertArrayEquals(java.util.Arrays.copyOfRange(onDisk, 500, 1000), bytes(second));
        second.release();
        assertEquals(2, c.counters().hits());

        // A third file does not fit: b, read least recently, goes.
        CommittedFile d = file("d", 1000);
        assertTrue(cache(c, "s", d));
        assertTrue(c.contains(a));
        assertFalse(c.contains(b));
        assertTrue(c.contains(d));
        assertEquals(1, c.counters().evictions());
        assertNull(c.chunk(b, 0));
        assertEquals(1, c.counters().misses(), "a small file not in memory is a miss");
        assertNull(c.chunk(big, 0));
        assertEquals(1, c.counters().misses(), "a file too large to cache is not a miss");
        assertEquals(2000, memory.held());

        // A slice being sent keeps its entry's bytes alive after the entry is evicted.
        c.removeShuffle("s");
        assertEquals(0, c.bytes());
        assertEquals(0, memory.held());
        assertArrayEquals(java.util.Arrays.copyOfRange(onDisk, 0, 500), bytes(first));
        first.release();
        c.close();
    }

    @Test
    void removingAShuffleDropsItsEntriesAndItsFillsInProgress() throws Exception {
        MemoryTracker memory = new MemoryTracker(1 << 20);
        PartitionCache c = new PartitionCache(memory, true, 1 << 20, 1 << 20, alloc);
        CommittedFile s1a = file("s1a", 100);
        CommittedFile s1b = file("s1b", 200);
        CommittedFile s2 = file("s2", 300);
        assertTrue(cache(c, "s1", s1a));
        assertTrue(cache(c, "s2", s2));
        assertTrue(c.startFill("s1", s1b)); // claimed at commit, read later
        c.removeShuffle("s1");
        assertFalse(c.fill(s1b), "its shuffle was removed while it was read");
        assertFalse(c.contains(s1a));
        assertFalse(c.contains(s1b));
        assertTrue(c.contains(s2));
        assertEquals(300, c.bytes());
        assertEquals(300, memory.held());
        // A file removed from disk before its fill is simply not cached.
        CommittedFile gone = file("gone", 100);
        assertTrue(c.startFill("s2", gone));
        assertTrue(gone.file().delete());
        assertFalse(c.fill(gone));
        assertEquals(300, memory.held());
        c.close();
        assertEquals(0, memory.held());
        assertFalse(c.startFill("s2", file("late", 100)), "closed");
    }

    @Test
    void shrinksUnderMemoryPressureAndNeverFillsAboveTheResumeMark() throws Exception {
        MemoryTracker memory = new MemoryTracker(100_000); // resume below 70,000; pause pushes at 85,000
        PartitionCache c = new PartitionCache(memory, true, 1 << 20, 10_000, alloc);
        assertEquals(20_000, c.capacity(), "at most a fifth of the memory limit");
        CacheShrinker shrinker = new CacheShrinker(c, memory);
        memory.addListener(shrinker);
        List<CommittedFile> files = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            files.add(file("f" + i, 1000));
            assertTrue(cache(c, "s", files.get(i)));
        }
        assertEquals(10_000, memory.held());

        // Pushes take 62,000 more: held is 72,000, above the resume mark though no pause yet. The next tick shrinks
        // the cache, oldest first, until held is below the mark.
        memory.add(62_000);
        memory.tick();
        waitFor(() -> memory.held() < 70_000, "the cache shrinks below the resume mark");
        assertEquals(69_000, memory.held());
        assertEquals(7, c.entries());
        for (int i = 0; i < 3; i++) assertFalse(c.contains(files.get(i)), "file " + i + " was among the oldest");
        assertFalse(c.startFill("s", file("more", 1000)), "no fill that would cross the resume mark");

        // Pushes reach the pause mark: the cache empties itself, and the worker stays paused only for its pushes.
        memory.add(20_000);
        assertTrue(memory.paused());
        // (entries leave first; their memory is released just after, outside the cache's lock)
        waitFor(() -> c.entries() == 0 && memory.held() == 82_000, "the cache empties under pressure");
        memory.release(82_000);
        assertFalse(memory.paused());
        assertTrue(cache(c, "s", files.get(0)), "fills again once memory is free");
        shrinker.close();
        c.close();
        assertEquals(0, memory.held());
    }

    @Test
    void aDisabledCacheHoldsNothing() throws Exception {
        MemoryTracker memory = new MemoryTracker(1 << 20);
        PartitionCache c = new PartitionCache(memory, false, 1 << 20, 1 << 20, alloc);
        CommittedFile a = file("a", 100);
        assertFalse(c.enabled());
        assertFalse(c.startFill("s", a));
        assertNull(c.chunk(a, 0));
        assertEquals(0, c.counters().misses());
        c.close();
    }
}
