package org.apache.spark.shuffle.estuary;

import io.estuary.client.ShuffleClient;
import io.estuary.client.engine.LostData;
import io.estuary.client.engine.MeteredBatches;
import io.estuary.client.read.ShuffleBatchReader;
import io.estuary.client.read.ShuffleDataLostException;
import org.apache.spark.Aggregator;
import org.apache.spark.InterruptibleIterator;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.util.TaskCompletionListener;
import org.apache.spark.util.collection.ExternalSorter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Product2;
import scala.collection.Iterator;

/**
 * Reads partitions [start, end) of every map from Estuary (Spark 1.6 / 2.4), then aggregates and sorts as Spark's
 * own reader would. Used by one task thread.
 */
final class EstuaryShuffleReader<K, C> implements ShuffleReader<K, C> {
    private static final Logger LOG = LoggerFactory.getLogger(EstuaryShuffleReader.class);
    private final EstuaryShuffleHandle<K, ?, C> handle;
    private final int startPartition;
    private final int endPartition;
    private final TaskContext context;
    private final ShuffleClient client;

    EstuaryShuffleReader(
            EstuaryShuffleHandle<K, ?, C> handle,
            int startPartition,
            int endPartition,
            TaskContext context,
            ShuffleClient client) {
        this.handle = handle;
        this.startPartition = startPartition;
        this.endPartition = endPartition;
        this.context = context;
        this.client = client;
    }

    /** Lost data becomes Spark's fetch failure; the driver hears of it first and starts a new generation. */
    private RuntimeException fetchFailed(ShuffleDataLostException e) {
        LOG.warn(
                "Shuffle {} partitions [{}, {}) cannot be read: {}",
                handle.shuffleId(),
                startPartition,
                endPartition,
                e.getMessage());
        LostData.report(client, handle.spec(), e);
        throw SparkServices.<RuntimeException>sneaky(
                SparkLine.fetchFailed(handle.shuffleId(), startPartition, "Estuary: " + e.getMessage(), e));
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public Iterator<Product2<K, C>> read() {
        ShuffleDependency<K, ?, C> dep = handle.dependency();
        ShuffleBatchReader batches =
                client.openReader(handle.spec(), startPartition, endPartition, 0, handle.spec().numMappers);
        ReadMetrics metrics = SparkLine.readMetrics(context);
        context.addTaskCompletionListener((TaskCompletionListener) ctx -> {
            batches.close();
            metrics.complete();
        });
        // The task's metrics are merged at task end (the listener above), as Spark's own reader does on this line.
        Iterator records = new InterruptibleIterator(
                context,
                new SparkRecordIterator(
                        new MeteredBatches(batches, metrics),
                        SparkLine.serializer(dep).newInstance(),
                        metrics,
                        this::fetchFailed,
                        () -> {}));
        Iterator result;
        if (dep.aggregator().isDefined()) {
            result = dep.mapSideCombine()
                    ? dep.aggregator().get().combineCombinersByKey(records, context)
                    : ((Aggregator) dep.aggregator().get()).combineValuesByKey(records, context);
        } else {
            result = records;
        }
        if (dep.keyOrdering().isDefined()) {
            ExternalSorter sorter = SparkLine.sorter(context, dep.keyOrdering(), SparkLine.serializer(dep));
            sorter.insertAll(result);
            context.taskMetrics().incMemoryBytesSpilled(sorter.memoryBytesSpilled());
            context.taskMetrics().incDiskBytesSpilled(sorter.diskBytesSpilled());
            context.addTaskCompletionListener((TaskCompletionListener) ctx -> sorter.stop());
            result = sorter.iterator();
        }
        return result instanceof InterruptibleIterator ? result : new InterruptibleIterator(context, result);
    }
}
