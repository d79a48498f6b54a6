package org.apache.spark.shuffle.estuary;

import io.estuary.client.ShuffleClient;
import io.estuary.client.read.ShuffleBatchReader;
import org.apache.spark.InterruptibleIterator;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.TaskContext;
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
  private final EstuaryShuffleHandle<K, ?, C> handle;
  private final int startMap;
  private final int endMap;
  private final int startPartition;
  private final int endPartition;
  private final TaskContext context;
  private final ShuffleClient client;
  private final ShuffleReadMetricsReporter metrics;

  EstuaryShuffleReader(EstuaryShuffleHandle<K, ?, C> handle, int startMap, int endMap, int startPartition,
      int endPartition, TaskContext context, ShuffleClient client, ShuffleReadMetricsReporter metrics) {
    this.handle = handle;
    this.startMap = startMap;
    this.endMap = endMap;
    this.startPartition = startPartition;
    this.endPartition = endPartition;
    this.context = context;
    this.client = client;
    this.metrics = metrics;
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public Iterator<Product2<K, C>> read() {
    ShuffleDependency<K, ?, C> dep = handle.dependency();
    ShuffleBatchReader batches = new ShuffleBatchReader(client, handle.spec(), startPartition, endPartition,
        startMap, endMap);
    context.addTaskCompletionListener((org.apache.spark.util.TaskCompletionListener) ctx -> batches.close());
    Iterator records = new InterruptibleIterator(context,
        new BatchRecordIterator(batches, dep.serializer().newInstance(), metrics));
    Iterator result;
    if (dep.aggregator().isDefined()) {
      result = dep.mapSideCombine()
          ? dep.aggregator().get().combineCombinersByKey(records, context)
          : ((org.apache.spark.Aggregator) dep.aggregator().get()).combineValuesByKey(records, context);
    } else {
      result = records;
    }
    if (dep.keyOrdering().isDefined()) {
      ExternalSorter sorter = new ExternalSorter(context, Option.empty(), Option.empty(), dep.keyOrdering(),
          dep.serializer());
      result = sorter.insertAllAndUpdateMetrics(result);
    }
    return result instanceof InterruptibleIterator ? result : new InterruptibleIterator(context, result);
  }
}
