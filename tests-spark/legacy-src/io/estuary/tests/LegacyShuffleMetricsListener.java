package io.estuary.tests;

import java.util.Arrays;
import java.util.concurrent.TimeoutException;
import org.apache.spark.SparkFirehoseListener;
import org.apache.spark.Success$;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.executor.ShuffleReadMetrics;
import org.apache.spark.executor.ShuffleWriteMetrics;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import scala.Option;

/**
 * Sums the shuffle metrics Spark 1.6 / 2.4 reports for successful tasks (what its UI and history server show),
 * between {@link #reset} and {@link #totals}: the legacy lines' counterpart of ../../tests' ShuffleMetricsListener,
 * written against what both lines share. Thread-safe: Spark's listener bus calls it on its own thread.
 */
public final class LegacyShuffleMetricsListener extends SparkFirehoseListener {
    /** The sums of one job's successful tasks. */
    public static final class Totals {
        public final long recordsWritten;
        public final long bytesWritten;
        public final long writeTimeNanos;
        public final long recordsRead;
        public final long bytesRead;
        public final long remoteBytesRead;

        Totals(long[] v) {
            recordsWritten = v[0];
            bytesWritten = v[1];
            writeTimeNanos = v[2];
            recordsRead = v[3];
            bytesRead = v[4];
            remoteBytesRead = v[5];
        }

        @Override
        public String toString() {
            return "written " + recordsWritten + " records / " + bytesWritten + " bytes in " + writeTimeNanos / 1000
                    + " us; read " + recordsRead + " records / " + bytesRead + " bytes (" + remoteBytesRead
                    + " remote)";
        }
    }

    private final long[] sums = new long[6];

    /** Adds a listener to the context. */
    public static LegacyShuffleMetricsListener on(JavaSparkContext sc) {
        LegacyShuffleMetricsListener l = new LegacyShuffleMetricsListener();
        sc.sc().addSparkListener(l);
        return l;
    }

    @Override
    public synchronized void onEvent(SparkListenerEvent event) {
        if (!(event instanceof SparkListenerTaskEnd)) return;
        SparkListenerTaskEnd end = (SparkListenerTaskEnd) event;
        TaskMetrics m = end.taskMetrics();
        if (m == null || end.reason() != Success$.MODULE$) return;
        // Held as Object: Spark 1.6 returns Options here, 2.4 the metrics themselves.
        Object written = m.shuffleWriteMetrics();
        Object read = m.shuffleReadMetrics();
        ShuffleWriteMetrics w = present(written);
        ShuffleReadMetrics r = present(read);
        // The names both lines have (2.4 also has shorter ones).
        if (w != null) {
            sums[0] += w.shuffleRecordsWritten();
            sums[1] += w.shuffleBytesWritten();
            sums[2] += w.shuffleWriteTime();
        }
        if (r != null) {
            sums[3] += r.recordsRead();
            sums[4] += r.totalBytesRead();
            sums[5] += r.remoteBytesRead();
        }
    }

    /** Spark 1.6 wraps a task's shuffle metrics in an Option, empty when the task had none; 2.4 does not. */
    @SuppressWarnings("unchecked")
    private static <T> T present(Object metrics) {
        if (metrics instanceof Option) {
            Option<?> o = (Option<?>) metrics;
            return o.isDefined() ? (T) o.get() : null;
        }
        return (T) metrics;
    }

    public synchronized void reset() {
        Arrays.fill(sums, 0);
    }

    /** The sums so far, once every event already posted has been delivered. */
    public Totals totals(JavaSparkContext sc) {
        try {
            sc.sc().listenerBus().waitUntilEmpty(60_000);
        } catch (TimeoutException e) {
            throw new IllegalStateException("Spark's listener bus did not drain in 60 s", e);
        }
        synchronized (this) {
            return new Totals(sums.clone());
        }
    }
}
