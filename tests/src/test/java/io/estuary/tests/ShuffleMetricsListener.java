package io.estuary.tests;

import org.apache.spark.Success$;
import org.apache.spark.executor.ShuffleReadMetrics;
import org.apache.spark.executor.ShuffleWriteMetrics;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;

/**
 * Sums the shuffle metrics Spark reports for successful tasks (what its UI and history server show), between
 * {@link #reset} and {@link #totals}. Thread-safe: Spark's listener bus calls it on its own thread.
 */
public final class ShuffleMetricsListener extends SparkListener {
    /** The sums of one job's successful tasks. */
    public static final class Totals {
        public final long recordsWritten;
        public final long bytesWritten;
        public final long writeTimeNanos;
        public final long recordsRead;
        public final long bytesRead;
        public final long remoteBytesRead;
        public final long fetchWaitMs;
        /** The largest peak execution memory of any one task (not a sum). */
        public final long maxTaskPeakMemory;

        Totals(long[] v) {
            maxTaskPeakMemory = v[7];
            recordsWritten = v[0];
            bytesWritten = v[1];
            writeTimeNanos = v[2];
            recordsRead = v[3];
            bytesRead = v[4];
            remoteBytesRead = v[5];
            fetchWaitMs = v[6];
        }

        @Override
        public String toString() {
            return "written " + recordsWritten + " records / " + bytesWritten + " bytes in " + writeTimeNanos / 1000
                    + " us; read " + recordsRead + " records / " + bytesRead + " bytes (" + remoteBytesRead
                    + " remote), "
                    + "fetch wait " + fetchWaitMs + " ms; largest task peak memory " + maxTaskPeakMemory + " bytes";
        }
    }

    private final long[] sums = new long[8];

    /** Adds a listener to the session's context. */
    public static ShuffleMetricsListener on(SparkSession spark) {
        ShuffleMetricsListener l = new ShuffleMetricsListener();
        spark.sparkContext().addSparkListener(l);
        return l;
    }

    @Override
    public synchronized void onTaskEnd(SparkListenerTaskEnd end) {
        TaskMetrics m = end.taskMetrics();
        if (m == null || end.reason() != Success$.MODULE$) return;
        ShuffleWriteMetrics w = m.shuffleWriteMetrics();
        ShuffleReadMetrics r = m.shuffleReadMetrics();
        sums[0] += w.recordsWritten();
        sums[1] += w.bytesWritten();
        sums[2] += w.writeTime();
        sums[3] += r.recordsRead();
        sums[4] += r.totalBytesRead();
        sums[5] += r.remoteBytesRead();
        sums[6] += r.fetchWaitTime();
        sums[7] = Math.max(sums[7], m.peakExecutionMemory());
    }

    public synchronized void reset() {
        java.util.Arrays.fill(sums, 0);
    }

    /** The sums so far, once every event already posted has been delivered. */
    public Totals totals(SparkSession spark) {
        try {
            spark.sparkContext().listenerBus().waitUntilEmpty(60_000);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("Spark's listener bus did not drain in 60 s", e);
        }
        // A full queue drops events, and dropped task ends would read as metrics Estuary failed to report.
        long dropped = spark.sparkContext().listenerBus().metrics().metricRegistry().getCounters().entrySet().stream()
                .filter(c -> c.getKey().endsWith("numDroppedEvents"))
                .mapToLong(c -> c.getValue().getCount())
                .sum();
        if (dropped > 0)
            throw new IllegalStateException("Spark's listener bus dropped " + dropped
                    + " events: the sums would be short (raise spark.scheduler.listenerbus.eventqueue.capacity)");
        synchronized (this) {
            return new Totals(sums.clone());
        }
    }
}
