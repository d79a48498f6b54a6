package org.apache.spark.shuffle.estuary;

import org.apache.spark.MapOutputTracker;
import org.apache.spark.MapOutputTrackerMaster;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.executor.ShuffleWriteMetrics;
import org.apache.spark.executor.TempShuffleReadMetrics;
import org.apache.spark.serializer.Serializer;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.BlockManagerId$;
import org.apache.spark.util.collection.ExternalSorter;
import scala.Option;
import scala.math.Ordering;

/** What Spark 2.4 does its own way, for the shared Spark 1.6 / 2.4 adapter. Stateless. */
final class SparkLine {
    private SparkLine() {}

    /** Spark 2.4 hides keys matching spark.redaction.regex (default: secret, password, token, access key) in its UI and event log. */
    static final boolean UI_REDACTS_SECRETS = true;

    /** Where Spark believes map output lives: not a real executor, so losing one never discards Estuary's data. */
    static final BlockManagerId LOCATION = BlockManagerId$.MODULE$.apply("estuary", "estuary", 1, Option.empty());

    static Serializer serializer(ShuffleDependency<?, ?, ?> dep) {
        return dep.serializer();
    }

    /**
     * The task's stage attempt, which Spark 2.4 tells: an indeterminate map stage resubmitted because its parent's
     * output was lost is a newer attempt (and writes a fresh generation) though no Estuary data of its own was lost.
     */
    static int stageAttempt(TaskContext ctx, int generation) {
        return ctx.stageAttemptNumber();
    }

    static boolean indeterminate(ShuffleDependency<?, ?, ?> dep) {
        return "INDETERMINATE".equals(String.valueOf(dep.rdd().outputDeterministicLevel()));
    }

    static void recordWrite(TaskContext ctx, long records, long bytes, long writeNanos) {
        ShuffleWriteMetrics m = ctx.taskMetrics().shuffleWriteMetrics();
        m.incRecordsWritten(records);
        m.incBytesWritten(bytes);
        m.incWriteTime(writeNanos);
    }

    static ReadMetrics readMetrics(TaskContext ctx) {
        TempShuffleReadMetrics m = ctx.taskMetrics().createTempShuffleReadMetrics();
        return new ReadMetrics() {
            @Override
            public void bytesFetched(long bytes) {
                m.incRemoteBytesRead(bytes);
            }

            @Override
            public void chunksFetched(long chunks) {
                m.incRemoteBlocksFetched(chunks);
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
                ctx.taskMetrics().mergeShuffleReadMetrics();
            }
        };
    }

    static <K, C> ExternalSorter<K, C, C> sorter(TaskContext ctx, Option<Ordering<K>> ordering, Serializer ser) {
        return new ExternalSorter<>(ctx, Option.empty(), Option.empty(), ordering, ser);
    }

    /** Names no executor: Spark then reruns the stages the driver made missing in {@link #forgetMapOutputs}. */
    static Exception fetchFailed(int shuffleId, int reduceId, String message, Throwable cause) {
        return new FetchFailedException(null, shuffleId, -1, reduceId, message, cause);
    }

    /** Driver: every map of the lost shuffle must run again. */
    static void forgetMapOutputs(int shuffleId) {
        MapOutputTracker tracker = SparkEnv.get().mapOutputTracker();
        if (tracker instanceof MapOutputTrackerMaster)
            ((MapOutputTrackerMaster) tracker).unregisterAllMapOutput(shuffleId);
    }
}
