package org.apache.spark.shuffle.estuary;

import org.apache.spark.ShuffleDependency;
import org.apache.spark.TaskContext;
import org.apache.spark.executor.ShuffleReadMetrics;
import org.apache.spark.executor.ShuffleWriteMetrics;
import org.apache.spark.serializer.Serializer;
import org.apache.spark.serializer.Serializer$;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.BlockManagerId$;
import org.apache.spark.util.collection.ExternalSorter;
import scala.Option;
import scala.math.Ordering;

/** What Spark 1.6 does its own way, for the shared Spark 1.6 / 2.4 adapter. Stateless. */
final class SparkLine {
    private SparkLine() {}

    /** Spark 1.6 shows every property unredacted in its UI and event log (spark.redaction.regex came in 2.1). */
    static final boolean UI_REDACTS_SECRETS = false;

    /** Where Spark believes map output lives: not a real executor, so losing one never discards Estuary's data. */
    static final BlockManagerId LOCATION = BlockManagerId$.MODULE$.apply("estuary", "estuary", 1);

    /** A dependency without its own serializer uses the application's. */
    static Serializer serializer(ShuffleDependency<?, ?, ?> dep) {
        return Serializer$.MODULE$.getSerializer(dep.serializer());
    }

    /**
     * What stands for the task's stage attempt: Spark 1.6 does not tell it, so the generation the driver bumps on each
     * loss does (1.6 has no indeterminate stages, so a rerun without a loss never needs a fresh generation).
     */
    static int stageAttempt(TaskContext ctx, int generation) {
        return generation;
    }

    /** Spark 1.6 does not know whether a stage's output may change when it reruns. */
    static boolean indeterminate(ShuffleDependency<?, ?, ?> dep) {
        return false;
    }

    static void recordWrite(TaskContext ctx, long records, long bytes, long writeNanos) {
        ShuffleWriteMetrics m = new ShuffleWriteMetrics();
        m.incShuffleRecordsWritten(records);
        m.incShuffleBytesWritten(bytes);
        m.incShuffleWriteTime(writeNanos);
        ctx.taskMetrics().shuffleWriteMetrics_$eq(Option.apply(m));
    }

    static ReadMetrics readMetrics(TaskContext ctx) {
        ShuffleReadMetrics m = ctx.taskMetrics().createShuffleReadMetricsForDependency();
        return new ReadMetrics() {
            @Override
            public void bytesFetched(long bytes) {
                m.incRemoteBytesRead(bytes);
            }

            @Override
            public void chunksFetched(long chunks) {
                m.incRemoteBlocksFetched((int) chunks);
            }

            @Override
            public void fetchWaitMillis(long ms) {
                m.incFetchWaitTime(ms);
            }

            @Override
            public void recordsRead(long records) {
                m.incRecordsRead(records);
            }

            @Override
            public void complete() {
                ctx.taskMetrics().updateShuffleReadMetrics();
            }
        };
    }

    static <K, C> ExternalSorter<K, C, C> sorter(TaskContext ctx, Option<Ordering<K>> ordering, Serializer ser) {
        return new ExternalSorter<>(ctx, Option.empty(), Option.empty(), ordering, Option.apply(ser));
    }

    /**
     * Names the fake executor every map output claims: a ShuffleMapStage of Spark 1.6 keeps its own list of outputs,
     * and treating that executor as lost is the only way to empty it, so every map reruns.
     */
    static Exception fetchFailed(int shuffleId, int reduceId, String message, Throwable cause) {
        return new FetchFailedException(LOCATION, shuffleId, -1, reduceId, message, cause);
    }

    /** Nothing to do on Spark 1.6: the fetch failure naming {@link #LOCATION} drops the outputs. */
    static void forgetMapOutputs(int shuffleId) {}
}
