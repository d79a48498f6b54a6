package io.estuary.bench;

import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.StageInfo;

/**
 * Where a workload's time went, from Spark's own listener events: the wall time of its map stages (those that write
 * a shuffle) and of the others, and, summed over their tasks, the shuffle write time and the reducers' fetch wait.
 * What is left of the workload's time outside every stage (stages of a SQL query run side by side, so their sums may
 * pass its time) is the driver's own work between them: job and stage submission, and the shuffle's registration
 * and commit as far as no task waits for them. {@link #take} returns the
 * sums since the previous call. Events arrive on Spark's listener thread; the sums are read after the workload's
 * jobs ended, when Spark has delivered them (hence the wait in {@link #take}).
 */
final class StageTimes extends SparkListener {
    private long mapStageMs;
    private long otherStageMs;
    private long writeNanos;
    private long fetchWaitMs;
    private long tasks;
    /** Each stage's {submitted, completed}, for the time covered by some stage. */
    private final java.util.List<long[]> spans = new java.util.ArrayList<>();

    static StageTimes attach(JavaSparkContext sc) {
        StageTimes t = new StageTimes();
        sc.sc().addSparkListener(t);
        return t;
    }

    @Override
    public synchronized void onStageCompleted(SparkListenerStageCompleted e) {
        StageInfo s = e.stageInfo();
        if (s.submissionTime().isEmpty() || s.completionTime().isEmpty()) return;
        long ms = (Long) s.completionTime().get() - (Long) s.submissionTime().get();
        spans.add(new long[] {
            (Long) s.submissionTime().get(), (Long) s.completionTime().get()
        });
        if (s.shuffleDepId().isDefined()) mapStageMs += ms;
        else otherStageMs += ms;
    }

    @Override
    public synchronized void onTaskEnd(SparkListenerTaskEnd e) {
        TaskMetrics m = e.taskMetrics();
        if (m == null) return;
        tasks++;
        writeNanos += m.shuffleWriteMetrics().writeTime();
        fetchWaitMs += m.shuffleReadMetrics().fetchWaitTime();
    }

    /** The sums since the last call, as one line for a workload that took {@code totalSecs}. */
    String take(double totalSecs) {
        try {
            // The listener bus delivers the last stage's events shortly after its job returned.
            Thread.sleep(300);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            String line = String.format(
                    "map stages %.2f s (shuffle write %.2f s in %d tasks), other stages %.2f s (fetch wait %.2f s), "
                            + "outside every stage %.2f s",
                    mapStageMs / 1e3,
                    writeNanos / 1e9,
                    tasks,
                    otherStageMs / 1e3,
                    fetchWaitMs / 1e3,
                    totalSecs - covered() / 1e3);
            mapStageMs = otherStageMs = writeNanos = fetchWaitMs = tasks = 0;
            spans.clear();
            return line;
        }
    }

    /** Milliseconds covered by at least one stage. */
    private long covered() {
        spans.sort((a, b) -> Long.compare(a[0], b[0]));
        long total = 0;
        long end = Long.MIN_VALUE;
        for (long[] sp : spans) {
            if (sp[1] <= end) continue;
            total += sp[1] - Math.max(sp[0], end);
            end = sp[1];
        }
        return total;
    }
}
