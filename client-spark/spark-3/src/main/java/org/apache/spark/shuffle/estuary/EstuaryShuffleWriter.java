package org.apache.spark.shuffle.estuary;

import io.estuary.client.ShuffleClient;
import io.estuary.client.write.AttemptIds;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.ClientConfig;
import java.io.IOException;
import org.apache.spark.Partitioner;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.TaskContext;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.BlockManagerId$;
import scala.Option;
import scala.Product2;
import scala.collection.Iterator;

/**
 * Writes one map task's output to Estuary: combines on the map side when the dependency asks for it, serializes,
 * and pushes per partition. Nothing is sorted here; the workers merge each partition. What is buffered per partition
 * is bounded and counted as Spark execution memory ({@link WriteBufferMemory}): when it grows too large, or Spark
 * needs the memory, every buffer is pushed early.
 */
final class EstuaryShuffleWriter<K, V> extends ShuffleWriter<K, V> {
    /**
     * Where Spark believes the output lives. Not a real executor, so losing an executor never discards Estuary's
     * output, and nothing ever fetches from it.
     */
    static final BlockManagerId LOCATION = BlockManagerId$.MODULE$.apply("estuary", "estuary", 1, Option.empty());

    private final EstuaryShuffleHandle<K, V, ?> handle;
    private final TaskContext context;
    private final long mapTaskId;
    private final ShuffleWriteMetricsReporter metrics;
    private final MapOutputWriter out;
    private final int batchSize;
    private final long maxBuffered;
    private WriteBufferMemory memory;
    private long[] partitionLengths;

    EstuaryShuffleWriter(
            EstuaryShuffleHandle<K, V, ?> handle,
            long mapTaskId,
            TaskContext context,
            ShuffleClient client,
            ShuffleWriteMetricsReporter metrics) {
        this.handle = handle;
        this.context = context;
        this.mapTaskId = mapTaskId;
        this.metrics = metrics;
        // Attempt numbers repeat (stage retries restart them; two attempts may share one: SPARK-8029), task attempt
        // ids do not.
        int attemptId = AttemptIds.ofTaskAttempt(context.taskAttemptId());
        this.out = client.openWriter(
                handle.spec(),
                context.partitionId(),
                attemptId,
                context.stageId(),
                context.stageAttemptNumber(),
                handle.indeterminate());
        this.batchSize = (int) (long) client.conf().get(ClientConfig.PUSH_BUFFER_SIZE);
        this.maxBuffered = client.conf().get(ClientConfig.PUSH_MAX_BUFFERED);
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public void write(Iterator<Product2<K, V>> records) throws IOException {
        ShuffleDependency<K, V, ?> dep = handle.dependency();
        Iterator<? extends Product2<K, ?>> it = records;
        if (dep.mapSideCombine()) {
            if (dep.aggregator().isEmpty()) throw new IllegalStateException("map-side combine without an aggregator");
            it = (Iterator) dep.aggregator().get().combineValuesByKey((Iterator) records, context);
        }
        Partitioner partitioner = dep.partitioner();
        RecordSerializer ser = RecordSerializer.create(dep.serializer(), out, handle.spec().numPartitions, batchSize);
        memory = new WriteBufferMemory(context.taskMemoryManager(), maxBuffered, () -> {
            ser.flush();
            out.pushBuffered();
        });
        long count = 0;
        while (it.hasNext()) {
            Product2<K, ?> r = it.next();
            ser.write(partitioner.getPartition(r._1()), r._1(), r._2());
            count++;
            memory.holding(out.bufferedBytes() + ser.bufferedBytes());
        }
        ser.close();
        // Spark shows the most the buffers held as the task's peak execution memory, as it does for its own sorter.
        context.taskMetrics().incPeakExecutionMemory(memory.peak());
        partitionLengths = out.finish();
        memory.release();
        metrics.incWriteTime(out.writeNanos()); // pushing and waiting for workers, as native counts its file writes
        long bytes = 0;
        for (long l : partitionLengths) bytes += l;
        metrics.incBytesWritten(bytes);
        metrics.incRecordsWritten(count);
    }

    @Override
    public Option<MapStatus> stop(boolean success) {
        if (memory != null) memory.release();
        if (!success || partitionLengths == null) {
            out.abort();
            return Option.empty();
        }
        return Option.apply(MapStatuses.create(LOCATION, partitionLengths, mapTaskId));
    }

    @Override
    public long[] getPartitionLengths() {
        return partitionLengths;
    }
}
