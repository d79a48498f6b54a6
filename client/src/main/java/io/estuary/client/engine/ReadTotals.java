package io.estuary.client.engine;

/** A {@link ReadMetricsSink} that sums what it is told, for engines that report totals once. One thread only. */
public final class ReadTotals implements ReadMetricsSink {
    private long bytes;
    private long chunks;
    private long waitMillis;

    @Override
    public void bytesFetched(long n) {
        bytes += n;
    }

    @Override
    public void chunksFetched(long n) {
        chunks += n;
    }

    @Override
    public void fetchWaitMillis(long n) {
        waitMillis += n;
    }

    public long bytes() {
        return bytes;
    }

    public long chunks() {
        return chunks;
    }

    public long waitMillis() {
        return waitMillis;
    }
}
