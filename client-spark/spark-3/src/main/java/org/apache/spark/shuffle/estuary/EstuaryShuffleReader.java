package org.apache.spark.shuffle.estuary;

import io.estuary.client.ShuffleClient;
import io.estuary.client.engine.LostData;
import io.estuary.client.engine.MeteredBatches;
import io.estuary.client.read.ShuffleBatchReader;
import io.estuary.client.read.ShuffleDataLostException;
import org.apache.spark.InterruptibleIterator;
import org.apache.spark.MapOutputTracker;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.util.collection.ExternalSorter;
import scala.Option;
import scala.Product2;
import scala.collection.Iterator;

/**
 * Reads partitions [start, end) of the maps [startMap, endMap) from Estuary, then aggregates and sorts exactly as
 * Spark's own reader would.
 */
final class EstuaryShuffleReader<K, C> implements ShuffleReader<K, C> {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(EstuaryShuffleReader.class);
    private final EstuaryShuffleHandle<K, ?, C> handle;
    private final int startMap;
    private final int endMap;
    private final int startPartition;
    private final int endPartition;
    private final TaskContext context;
    private final ShuffleClient client;
    private final ShuffleReadMetricsReporter metrics;

    EstuaryShuffleReader(
            EstuaryShuffleHandle<K, ?, C> handle,
            int startMap,
            int endMap,
            int startPartition,
            int endPartition,
            TaskContext context,
            ShuffleClient client,
            ShuffleReadMetricsReporter metrics) {
        this.handle = handle;
        this.startMap = startMap;
        this.endMap = endMap;
        this.startPartition = startPartition;
        this.endPartition = endPartition;
        this.context = context;
        this.client = client;
        this.metrics = metrics;
    }

    /**
     * Lost data becomes Spark's fetch failure, so Spark reruns the map stage. The driver hears of it first: it drops
     * the generation and unregisters the map outputs, so that every map reruns into a fresh generation.
     */
    private RuntimeException fetchFailed(ShuffleDataLostException e) {
        LOG.warn(
                "Shuffle {} partitions [{}, {}) of maps [{}, {}) cannot be read: {}",
                handle.shuffleId(),
                startPartition,
                endPartition,
                startMap,
                endMap,
                e.getMessage());
        LostData.report(client, handle.spec(), e);
        // Spark's FetchFailedException is checked; it must leave the record iterator as it is (Spark recognises it
        // even when wrapped, but its message and type should reach the scheduler unchanged).
        throw SparkServices.<RuntimeException>sneaky(new FetchFailedException(
                null, handle.shuffleId(), -1L, -1, startPartition, "Estuary: " + e.getMessage(), e));
    }

    /**
     * Spark's map output epoch as this executor knows it: Spark raises it when map outputs are lost or a stage reruns,
     * and an executor takes the new value from the first task that carries it, before that task runs.
     */
    private static long mapOutputEpoch() {
        MapOutputTracker tracker = SparkEnv.get().mapOutputTracker();
        synchronized (tracker.epochLock()) {
            return tracker.epoch();
        }
    }

    /** Spark's read metrics reporter as the shared reader sees it: each chunk fetched is a remote block. */
    private static SparkReadMetrics readMetrics(ShuffleReadMetricsReporter m) {
        return new SparkReadMetrics() {
            @Override
            public void bytesFetched(long bytes) {
                m.incRemoteBytesRead(bytes);
            }

            @Override
            public void chunksFetched(long chunks) {
                m.incRemoteBlocksFetched(chunks);
            }

            @Override
            public void fetchWaitMillis(long millis) {
                m.incFetchWaitTime(millis);
            }

            @Override
            public void recordsRead(long records) {
                m.incRecordsRead(records);
            }
        };
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public Iterator<Product2<K, C>> read() {
        ShuffleDependency<K, ?, C> dep = handle.dependency();
        // Where the partitions are is kept per executor under Spark's map output epoch, as Spark keeps its own map
        // statuses: a lost output or a rerun raises the epoch before any task that must see it runs here.
        ShuffleBatchReader batches =
                client.openReader(handle.spec(), startPartition, endPartition, startMap, endMap, mapOutputEpoch());
        // Spark gives the reader a temporary read-metrics holder; like Spark's own reader, its values must be merged
        // into the task's shuffle read metrics, or listeners and the UI see nothing read. Merging recomputes the sum
        // over all holders, so doing it both at the end of the records and at task end (a limit may stop early) counts
        // nothing twice.
        Runnable mergeMetrics = () -> context.taskMetrics().mergeShuffleReadMetrics();
        context.addTaskCompletionListener((org.apache.spark.util.TaskCompletionListener) ctx -> {
            batches.close();
            mergeMetrics.run();
        });
        SparkReadMetrics readMetrics = readMetrics(metrics);
        Iterator records = new InterruptibleIterator(
                context,
                new SparkRecordIterator(
                        new MeteredBatches(batches, readMetrics),
                        dep.serializer().newInstance(),
                        readMetrics,
                        this::fetchFailed,
                        mergeMetrics));
        Iterator result;
        if (dep.aggregator().isDefined()) {
            result = dep.mapSideCombine()
                    ? dep.aggregator().get().combineCombinersByKey(records, context)
                    : ((org.apache.spark.Aggregator) dep.aggregator().get()).combineValuesByKey(records, context);
        } else {
            result = records;
        }
        if (dep.keyOrdering().isDefined()) {
            ExternalSorter sorter = ExternalSorters.create(context, (Option) dep.keyOrdering(), dep.serializer());
            result = sorter.insertAllAndUpdateMetrics(result);
        }
        return result instanceof InterruptibleIterator ? result : new InterruptibleIterator(context, result);
    }
}
