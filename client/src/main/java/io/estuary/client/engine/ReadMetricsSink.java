package io.estuary.client.engine;

/**
 * Where {@link MeteredBatches} reports what a reader fetched, as increments: each engine implements it with its own
 * read metrics (Spark's shuffle read metrics, MapReduce counters). Called from the reading thread only.
 */
public interface ReadMetricsSink {
    /** Bytes received from workers, as Estuary stores them (framed, compressed when the client compresses). */
    void bytesFetched(long bytes);

    /** Chunks received from workers (a chunk is what the engine would count as one fetched block). */
    void chunksFetched(long chunks);

    /** Time spent waiting for workers, in whole milliseconds. */
    void fetchWaitMillis(long millis);
}
