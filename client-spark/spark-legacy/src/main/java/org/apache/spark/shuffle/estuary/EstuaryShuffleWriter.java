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
import org.apache.spark.scheduler.MapStatus$;
import org.apache.spark.shuffle.ShuffleWriter;
import scala.Option;
import scala.Product2;
import scala.collection.Iterator;

/**
 * Writes one map task's output to Estuary (Spark 1.6 / 2.4): combines on the map side when the dependency asks for
 * it, serializes, and pushes per partition. Used by one task thread.
 */
final class EstuaryShuffleWriter<K, V> extends ShuffleWriter<K, V> {
    private final EstuaryShuffleHandle<K, V, ?> handle;
    private final TaskContext context;
    private final MapOutputWriter out;
    private final int batchSize;
    private long[] partitionLengths;

    EstuaryShuffleWriter(EstuaryShuffleHandle<K, V, ?> handle, int mapId, TaskContext context, ShuffleClient client) {
        this.handle = handle;
        this.context = context;
        int generation = handle.generation();
        // Attempt numbers repeat (every stage attempt restarts them; two attempts may share one: SPARK-8029), task
        // attempt ids do not.
        int attemptId = AttemptIds.ofTaskAttempt(context.taskAttemptId());
        // A task of an older stage attempt than the newest generation's is a straggler of a stage that was rerun, and
        // is refused (see SparkLine.stageAttempt for what stands for the attempt on each line).
        this.out = client.openWriter(
                handle.spec(),
                mapId,
                attemptId,
                context.stageId(),
                SparkLine.stageAttempt(context, generation),
                handle.indeterminate());
        this.batchSize = (int) (long) client.conf().get(ClientConfig.PUSH_BUFFER_SIZE);
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
        RecordSerializer ser =
                RecordSerializer.create(SparkLine.serializer(dep), out, handle.spec().numPartitions, batchSize);
        long count = 0;
        while (it.hasNext()) {
            Product2<K, ?> r = it.next();
            ser.write(partitioner.getPartition(r._1()), r._1(), r._2());
            count++;
        }
        ser.flush();
        long t0 = System.nanoTime();
        partitionLengths = out.finish();
        long bytes = 0;
        for (long l : partitionLengths) bytes += l;
        SparkLine.recordWrite(context, count, bytes, System.nanoTime() - t0);
    }

    @Override
    public Option<MapStatus> stop(boolean success) {
        if (!success || partitionLengths == null) {
            out.abort();
            return Option.empty();
        }
        return Option.apply(MapStatus$.MODULE$.apply(SparkLine.LOCATION, partitionLengths));
    }
}
