package io.estuary.mr;

import io.estuary.client.ShuffleClient;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.ClientConfig;
import io.estuary.network.client.RemoteException;
import java.io.IOException;
import org.apache.hadoop.io.DataOutputBuffer;
import org.apache.hadoop.io.serializer.SerializationFactory;
import org.apache.hadoop.io.serializer.Serializer;
import org.apache.hadoop.mapred.Counters;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.MapOutputCollector;
import org.apache.hadoop.mapred.MapTask;
import org.apache.hadoop.mapred.OutputCollector;
import org.apache.hadoop.mapred.Task;
import org.apache.hadoop.mapred.TaskAttemptID;
import org.apache.hadoop.mapred.TaskStatus;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.TaskCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * MapReduce's map output collector for Estuary
 * ({@code mapreduce.job.map.output.collector.class=io.estuary.mr.EstuaryMapOutputCollector}). Like MapReduce's own
 * collector it serializes each record into a buffer bounded by {@code mapreduce.task.io.sort.mb}; when the buffer
 * is {@code mapreduce.map.sort.spill.percent} full it sorts it (by partition, then with the job's sort comparator),
 * runs the job's combiner over each partition's run, and instead of writing a spill file pushes each run to
 * Estuary. When the map ends, the attempt reports its end to the job's lifecycle manager; the first attempt of a
 * map to end is the one reducers read (a failed, killed or speculative attempt that ended too pushed the same
 * records, and they are never read).
 *
 * <p>Counters are those of the native collector. Map output records and bytes are always the native values. Combine
 * input and output records and spilled records (the records pushed, after combining) equal the native ones when a
 * map spills once; with more spills they depend on where spills fall, and the native collector also counts the
 * records it writes again while merging its spill files (and combines again when there are three or more), which
 * this collector never does: every map output record then goes through the combiner exactly once, and the records
 * pushed are the combiner's output. Map output materialized bytes are the bytes pushed, as Estuary stores them (its
 * framing, compressed when the client compresses), not IFile bytes on local disk; a reducer's shuffle bytes count
 * the same bytes, so across the job the two are equal, as natively.
 *
 * <p>Used by one map task's thread.
 */
public class EstuaryMapOutputCollector<K, V> implements MapOutputCollector<K, V> {
    private static final Logger LOG = LoggerFactory.getLogger(EstuaryMapOutputCollector.class);

    private JobConf job;
    private Task.TaskReporter reporter;
    private MapTask mapTask;
    private ShuffleClient client;
    private MapOutputWriter writer;
    private SegmentPusher pusher;
    private RecordBuffer buffer;
    private long spillThreshold;
    private int partitions;
    private Class<K> keyClass;
    private Class<V> valueClass;
    private Serializer<K> keySerializer;
    private Serializer<V> valueSerializer;
    private Task.CombinerRunner<K, V> combiner;
    private CombineOutput combineOutput;
    private Counters.Counter mapOutputRecords;
    private Counters.Counter mapOutputBytes;
    private Counters.Counter combineOutputRecords;
    private Counters.Counter spilledRecords;
    private Counters.Counter materializedBytes;
    private boolean finished;
    private int spills;

    @Override
    @SuppressWarnings("unchecked")
    public void init(Context context) throws IOException, ClassNotFoundException {
        job = context.getJobConf();
        reporter = context.getReporter();
        mapTask = context.getMapTask();
        TaskAttemptID attempt = context.getMapTask().getTaskID();
        partitions = job.getNumReduceTasks();
        int sortMb = job.getInt(MRJobConfig.IO_SORT_MB, MRJobConfig.DEFAULT_IO_SORT_MB);
        float spillPercent = job.getFloat(MRJobConfig.MAP_SORT_SPILL_PERCENT, 0.8f);
        if (sortMb <= 0 || sortMb > 2047) {
            throw new IOException("Invalid \"" + MRJobConfig.IO_SORT_MB + "\": " + sortMb);
        }
        if (spillPercent <= 0 || spillPercent > 1) {
            throw new IOException("Invalid \"" + MRJobConfig.MAP_SORT_SPILL_PERCENT + "\": " + spillPercent);
        }
        int limit = sortMb << 20;
        spillThreshold = (long) (limit * spillPercent);
        buffer = new RecordBuffer(job.getOutputKeyComparator(), limit);
        keyClass = (Class<K>) job.getMapOutputKeyClass();
        valueClass = (Class<V>) job.getMapOutputValueClass();
        SerializationFactory serialization = new SerializationFactory(job);
        keySerializer = serialization.getSerializer(keyClass);
        keySerializer.open(buffer.stream());
        valueSerializer = serialization.getSerializer(valueClass);
        valueSerializer.open(buffer.stream());

        mapOutputRecords = reporter.getCounter(TaskCounter.MAP_OUTPUT_RECORDS);
        mapOutputBytes = reporter.getCounter(TaskCounter.MAP_OUTPUT_BYTES);
        combineOutputRecords = reporter.getCounter(TaskCounter.COMBINE_OUTPUT_RECORDS);
        spilledRecords = reporter.getCounter(TaskCounter.SPILLED_RECORDS);
        materializedBytes = reporter.getCounter(TaskCounter.MAP_OUTPUT_MATERIALIZED_BYTES);
        combiner = Task.CombinerRunner.create(
                job, attempt, reporter.getCounter(TaskCounter.COMBINE_INPUT_RECORDS), reporter, null);

        ShuffleSpec spec = JobShuffleSpecs.of(job, attempt.getJobID());
        client = LocalLifecycles.services(job).leaseClient();
        writer = client.openWriter(spec, attempt.getTaskID().getId(), attempt.getId());
        pusher = new SegmentPusher(writer, (int) (long) client.conf().get(ClientConfig.PUSH_BUFFER_SIZE));
        if (combiner != null) combineOutput = new CombineOutput(serialization);
    }

    @Override
    public void collect(K key, V value, int partition) throws IOException, InterruptedException {
        if (key.getClass() != keyClass) {
            throw new IOException("Type mismatch in key from map: expected " + keyClass.getName() + ", received "
                    + key.getClass().getName());
        }
        if (value.getClass() != valueClass) {
            throw new IOException("Type mismatch in value from map: expected " + valueClass.getName() + ", received "
                    + value.getClass().getName());
        }
        if (partition < 0 || partition >= partitions)
            throw new IOException("Illegal partition for " + key + " (" + partition + ")");
        int keyStart = buffer.position();
        keySerializer.serialize(key);
        int valueStart = buffer.position();
        valueSerializer.serialize(value);
        buffer.add(partition, keyStart, valueStart);
        mapOutputRecords.increment(1);
        mapOutputBytes.increment(buffer.position() - keyStart);
        if (buffer.usedBytes() >= spillThreshold) spill();
    }

    /** Sorts what is buffered and pushes each partition's run, combined when the job has a combiner. */
    private void spill() throws IOException, InterruptedException {
        int n = buffer.count();
        if (n == 0) return;
        long t0 = System.nanoTime();
        buffer.sort();
        byte[] data = buffer.data();
        int i = 0;
        while (i < n) {
            int p = buffer.partition(i);
            int end = i;
            while (end < n && buffer.partition(end) == p) end++;
            pusher.start(p);
            if (combiner == null) {
                for (int r = i; r < end; r++) {
                    int ks = buffer.keyStart(r);
                    int vs = buffer.valueStart(r);
                    pusher.append(data, ks, vs - ks, vs, buffer.valueEnd(r) - vs);
                }
            } else {
                try {
                    combiner.combine(new SortedRunIterator(buffer, i, end), combineOutput);
                } catch (ClassNotFoundException e) {
                    throw new IOException("the combiner's classes are missing", e);
                }
            }
            pusher.end();
            reporter.progress();
            i = end;
        }
        spills++;
        LOG.debug("Spill {}: {} records to Estuary in {} ms", spills, n, (System.nanoTime() - t0) / 1_000_000);
        buffer.reset();
    }

    /**
     * Pushes what is left and ends the attempt. MapReduce also flushes the collector of a map that failed (the new
     * API's output is closed in a finally block); such an attempt must never end, or its partial output would win.
     * Only a map whose mapper returned has entered the sort phase.
     */
    @Override
    public void flush() throws IOException, InterruptedException {
        if (finished) return; // MapReduce flushes again when closing the output failed after a flush
        if (mapTask.getPhase() != TaskStatus.Phase.SORT) {
            LOG.warn(
                    "The map did not complete (phase {}); its output is not ended, so reducers ignore it",
                    mapTask.getPhase());
            return;
        }
        spill();
        long[] bytes;
        try {
            bytes = writer.finish();
        } catch (RemoteException e) {
            throw new IOException("Estuary: ending the map attempt failed: " + e.getMessage(), e);
        }
        finished = true;
        long total = 0;
        for (long b : bytes) total += b;
        spilledRecords.increment(pusher.pushedRecords());
        materializedBytes.increment(total);
        LOG.info(
                "Map output pushed to Estuary: {} records, {} bytes in {} spills",
                pusher.pushedRecords(),
                total,
                spills);
    }

    @Override
    public void close() throws IOException {
        if (writer != null && !finished) writer.abort(); // the attempt never ends, so readers ignore what it pushed
        if (client != null) {
            LocalLifecycles.services(job).returnClient(client);
            client = null;
        }
    }

    /** Where the combiner's output goes: serialized, then framed and pushed with the rest of the run. */
    private final class CombineOutput implements OutputCollector<K, V> {
        private final DataOutputBuffer record = new DataOutputBuffer();
        private final Serializer<K> keys;
        private final Serializer<V> values;

        CombineOutput(SerializationFactory serialization) throws IOException {
            keys = serialization.getSerializer(keyClass);
            keys.open(record);
            values = serialization.getSerializer(valueClass);
            values.open(record);
        }

        @Override
        public void collect(K key, V value) throws IOException {
            record.reset();
            keys.serialize(key);
            int keyLength = record.getLength();
            values.serialize(value);
            pusher.append(record.getData(), 0, keyLength, keyLength, record.getLength() - keyLength);
            combineOutputRecords.increment(1);
        }
    }
}
