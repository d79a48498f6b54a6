package org.apache.spark.shuffle.estuary;

import org.apache.spark.memory.MemoryConsumer;
import org.apache.spark.memory.MemoryMode;
import org.apache.spark.memory.TaskMemoryManager;

/**
 * A map task's write buffers as Spark execution memory: the writer reports what it holds between records, this
 * asks Spark's memory manager for room in steps, and when Spark grants less, when the holding passes
 * {@code estuary.client.push.maxBufferedBytes}, or when Spark asks this consumer to spill (another consumer of the
 * task needs memory), every buffer is pushed at once and the memory given back. So a map task's buffers never grow
 * with the number of partitions, and Spark sees them.
 *
 * <p>Confined to the task's thread: Spark calls {@link #spill} only from a memory request of the same task, which
 * happens between records.
 */
final class WriteBufferMemory extends MemoryConsumer {
    private static final long STEP = 1L << 20;

    private final long maxBuffered;
    /** Pushes everything buffered and frees the buffers. */
    private final Runnable pushAll;

    private long granted;
    private long peak;
    private long spills;

    WriteBufferMemory(TaskMemoryManager memory, long maxBuffered, Runnable pushAll) {
        super(memory, memory.pageSizeBytes(), MemoryMode.ON_HEAP);
        this.maxBuffered = maxBuffered;
        this.pushAll = pushAll;
    }

    /** The writer holds {@code bytes} now; called between records. */
    void holding(long bytes) {
        if (bytes > peak) peak = bytes;
        if (bytes <= granted) return;
        if (bytes > maxBuffered) {
            pushAndFree();
            return;
        }
        long spillsBefore = spills;
        granted += acquireMemory(Math.max(STEP, bytes - granted)); // may spill this very consumer
        if (spills == spillsBefore && bytes > granted) pushAndFree();
    }

    private long pushAndFree() {
        pushAll.run();
        spills++;
        long freed = granted;
        if (freed > 0) freeMemory(freed);
        granted = 0;
        return freed;
    }

    @Override
    public long spill(long size, MemoryConsumer trigger) {
        return granted == 0 ? 0 : pushAndFree();
    }

    /** The most the writer held at once. */
    long peak() {
        return peak;
    }

    /** Gives everything back to Spark; the task is done writing. */
    void release() {
        if (granted > 0) freeMemory(granted);
        granted = 0;
    }
}
