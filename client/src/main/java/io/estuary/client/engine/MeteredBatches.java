package io.estuary.client.engine;

import io.estuary.client.read.ShuffleBatchReader;
import io.estuary.client.read.ShuffleDataLostException;
import io.estuary.network.client.RemoteException;
import io.netty.buffer.ByteBuf;

/**
 * The batches a reduce task reads, with what fetching them cost reported to the engine's {@link ReadMetricsSink}
 * after every step: bytes and chunks received, and the time spent waiting for workers (summed in nanoseconds by the
 * reader, reported in whole milliseconds so short waits are not rounded away one by one). Every engine counts the
 * same things this way. The source is closed when it runs out, and by {@link #close()} when the engine stops early.
 * Confined to the reading thread, like the reader.
 */
public final class MeteredBatches implements AutoCloseable {
    /** What {@link MeteredBatches} reads: the operations of {@link ShuffleBatchReader} it uses. */
    public interface Source extends AutoCloseable {
        /** The next decoded batch (valid until the next call), or null when all is read. */
        ByteBuf next() throws RemoteException;

        long bytesFetched();

        long chunksFetched();

        long fetchWaitNanos();

        @Override
        void close();
    }

    private final Source source;
    private final ReadMetricsSink sink;
    private boolean done;
    private long reportedBytes;
    private long reportedChunks;
    private long reportedWaitMs;

    public MeteredBatches(Source source, ReadMetricsSink sink) {
        this.source = source;
        this.sink = sink;
    }

    public MeteredBatches(ShuffleBatchReader reader, ReadMetricsSink sink) {
        this(of(reader), sink);
    }

    /** A reader as a {@link Source}. */
    public static Source of(ShuffleBatchReader reader) {
        return new Source() {
            @Override
            public ByteBuf next() throws RemoteException {
                return reader.next();
            }

            @Override
            public long bytesFetched() {
                return reader.bytesFetched();
            }

            @Override
            public long chunksFetched() {
                return reader.chunksFetched();
            }

            @Override
            public long fetchWaitNanos() {
                return reader.fetchWaitNanos();
            }

            @Override
            public void close() {
                reader.close();
            }
        };
    }

    /**
     * The next batch's decoded bytes, valid until the next call, or null once all is read (the source is then
     * closed). What was fetched is reported even when the call fails.
     *
     * @throws ShuffleDataLostException when data is lost: the engine reruns the maps
     * @throws RemoteException when reading failed otherwise
     */
    public ByteBuf next() throws RemoteException {
        if (done) return null;
        ByteBuf batch;
        try {
            batch = source.next();
        } finally {
            report();
        }
        if (batch == null) {
            done = true;
            source.close();
        }
        return batch;
    }

    /** True once {@link #next()} returned null. */
    public boolean done() {
        return done;
    }

    private void report() {
        long bytes = source.bytesFetched();
        long chunks = source.chunksFetched();
        long waitMs = source.fetchWaitNanos() / 1_000_000;
        if (bytes > reportedBytes) sink.bytesFetched(bytes - reportedBytes);
        if (chunks > reportedChunks) sink.chunksFetched(chunks - reportedChunks);
        if (waitMs > reportedWaitMs) sink.fetchWaitMillis(waitMs - reportedWaitMs);
        reportedBytes = bytes;
        reportedChunks = chunks;
        reportedWaitMs = waitMs;
    }

    @Override
    public void close() {
        source.close();
    }
}
