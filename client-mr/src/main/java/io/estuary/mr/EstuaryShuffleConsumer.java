package io.estuary.mr;

import io.estuary.client.ShuffleClient;
import io.estuary.client.engine.LostData;
import io.estuary.client.engine.MeteredBatches;
import io.estuary.client.engine.ReadTotals;
import io.estuary.client.read.ShuffleBatchReader;
import io.estuary.client.read.ShuffleDataLostException;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.network.client.RemoteException;
import io.netty.buffer.ByteBuf;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import org.apache.hadoop.mapred.IFileOutputStream;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.RawKeyValueIterator;
import org.apache.hadoop.mapred.ShuffleConsumerPlugin;
import org.apache.hadoop.mapred.TaskStatus;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.reduce.ExceptionReporter;
import org.apache.hadoop.mapreduce.task.reduce.MapHost;
import org.apache.hadoop.mapreduce.task.reduce.MapOutput;
import org.apache.hadoop.mapreduce.task.reduce.MergeManagerImpl;
import org.apache.hadoop.mapreduce.task.reduce.ShuffleClientMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * MapReduce's shuffle for a reducer reading from Estuary
 * ({@code mapreduce.job.reduce.shuffle.consumer.plugin.class=io.estuary.mr.EstuaryShuffleConsumer}). It reads the
 * reducer's partition (the batches of each map's first attempt to end, checked against what the maps reported) and
 * hands every batch, a sorted run, to MapReduce's own merge manager: it holds runs in memory within
 * {@code mapreduce.reduce.shuffle.input.buffer.percent} of the heap, merges them to local disk when that fills, and
 * returns the merged records sorted by the job's sort comparator (the reducer groups them with the grouping
 * comparator, as always). Reduce input records and groups are the native ones. Shuffled maps count every map once.
 * Reduce shuffle bytes are the bytes fetched from Estuary as it stores them (its framing, compressed when the client
 * compresses), not IFile segments, so they differ from native; summed over the job they equal the maps'
 * materialized bytes, as natively. Merged map outputs and the reduce side's spilled records count the merge
 * manager's work on runs, which are Estuary's batches (about the push buffer size each), not one segment per map,
 * so they follow the data's size rather than the number of maps.
 *
 * <p>When the partition cannot be read (every copy of some data lost, or the counts do not add up) the lifecycle
 * manager is told (the generation is dropped, and rerun maps write a fresh one) and the ApplicationMaster is asked
 * to rerun the maps ({@link MapReruns}). If nothing was read yet, the attempt waits for the reruns and reads again;
 * otherwise it fails once the ApplicationMaster has acted, and a later attempt reads the new generation. Under
 * LocalJobRunner, which never reruns maps, the attempt fails. Used by one reduce task's thread (merges run on the
 * merge manager's threads and report errors through {@link #reportException}).
 */
public class EstuaryShuffleConsumer<K, V> implements ShuffleConsumerPlugin<K, V>, ExceptionReporter {
    private static final Logger LOG = LoggerFactory.getLogger(EstuaryShuffleConsumer.class);
    /** IFile's end of records: a key length and a value length of -1, one byte each as variable-length ints. */
    private static final byte[] EOF_MARKER = {(byte) 0xff, (byte) 0xff};
    /** Reads of the partition one attempt makes, the first included, while nothing of it reached the merge. */
    private static final int MAX_READS = 3;
    /** How long a read waits for merge memory before it looks for a failed merge again. */
    private static final long RESOURCE_WAIT_MS = 1000;

    private Context<K, V> context;
    private volatile Throwable mergeError;

    @Override
    public void init(Context<K, V> context) {
        this.context = context;
    }

    @Override
    public RawKeyValueIterator run() throws IOException, InterruptedException {
        JobConf job = context.getJobConf();
        TaskAttemptID reduceId = context.getReduceId();
        ShuffleSpec spec = JobShuffleSpecs.of(job, reduceId.getJobID());
        int partition = reduceId.getTaskID().getId();
        // Runs are held uncompressed, so the merge manager gets no codec.
        MergeManagerImpl<K, V> merger = new MergeManagerImpl<>(
                reduceId,
                job,
                context.getLocalFS(),
                context.getLocalDirAllocator(),
                context.getReporter(),
                null,
                context.getCombinerClass(),
                context.getCombineCollector(),
                context.getSpilledRecordsCounter(),
                context.getReduceCombineInputCounter(),
                context.getMergedMapOutputsCounter(),
                this,
                context.getMergePhase(),
                context.getMapOutputFile());
        ShuffleClientMetrics metrics = ShuffleClientMetrics.create(reduceId, job);
        MapHost host = new MapHost("estuary", "estuary");
        ShuffleClient client = LocalLifecycles.services(job).leaseClient();
        long t0 = System.nanoTime();
        long runs = 0;
        long records = 0;
        boolean local = MrJobKeys.isLocal(job);
        MapReruns reruns = new MapReruns(context, spec.numMappers, client.clock());
        try {
            for (int round = 1; ; round++) {
                try (ShuffleBatchReader reader =
                        client.openReader(spec, partition, partition + 1, 0, spec.numMappers)) {
                    // Counted once the partition is read whole: a read that finds data lost counts nothing.
                    ReadTotals fetched = new ReadTotals();
                    MeteredBatches batches = new MeteredBatches(reader, fetched);
                    ByteBuf batch;
                    while ((batch = batches.next()) != null) {
                        TaskAttemptID runId =
                                new TaskAttemptID(new TaskID(reduceId.getJobID(), TaskType.MAP, (int) runs), 0);
                        addRun(merger, runId, batch, host, metrics);
                        runs++;
                        checkMerges();
                    }
                    records = reader.recordsRead();
                    context.getReduceShuffleBytes().increment(fetched.bytes());
                    context.getShuffledMapsCounter().increment(spec.numMappers);
                    break;
                } catch (ShuffleDataLostException e) {
                    context.getFailedShuffleCounter().increment(1);
                    reportLost(client, spec, e);
                    String what = "Estuary: partition " + partition + " of " + reduceId.getJobID() + " cannot be read: "
                            + e.getMessage();
                    if (local) throw new IOException(what + " (LocalJobRunner never reruns maps)", e);
                    reruns.request();
                    if (runs > 0 || round >= MAX_READS) {
                        // Runs of the lost generation are in the merge manager and cannot be taken back: this attempt
                        // fails
                        // once the ApplicationMaster has acted on the reports, and a later one reads the rerun maps'
                        // output.
                        reruns.awaitAcknowledged();
                        throw new IOException(
                                what + "; the maps run again and a later attempt of this reduce reads them", e);
                    }
                    LOG.warn("{}; waiting for the maps to run again, then reading again", what);
                    reruns.awaitAllRerun();
                }
            }
        } catch (RemoteException e) {
            context.getFailedShuffleCounter().increment(1);
            throw new IOException(
                    "Estuary: reading partition " + partition + " of " + reduceId.getJobID() + " failed: "
                            + e.getMessage(),
                    e);
        } finally {
            LocalLifecycles.services(job).returnClient(client);
        }
        LOG.info(
                "Read partition {} from Estuary: {} records in {} runs in {} ms",
                partition,
                records,
                runs,
                (System.nanoTime() - t0) / 1_000_000);
        if (local && MrJobKeys.lifecycleAddress(job) == null) {
            LocalLifecycles.reducerDone(job, reduceId.getJobID().toString(), spec.numPartitions);
        }
        context.getCopyPhase().complete();
        context.getStatus().setPhase(TaskStatus.Phase.SORT);
        RawKeyValueIterator merged;
        try {
            merged = merger.close();
        } catch (Throwable t) {
            throw new IOException("merging the map outputs failed: " + t.getMessage(), t);
        }
        checkMerges();
        return merged;
    }

    /**
     * Gives one sorted run to the merge manager, in the form a fetcher gives it: IFile records, end marker and
     * checksum. Waits while the manager's memory is full (an in-memory merge is then freeing it); fails if a merge
     * failed meanwhile.
     */
    private void addRun(
            MergeManagerImpl<K, V> merger,
            TaskAttemptID runId,
            ByteBuf batch,
            MapHost host,
            ShuffleClientMetrics metrics)
            throws IOException, InterruptedException {
        int length = batch.readableBytes();
        ByteArrayOutputStream framed = new ByteArrayOutputStream(length + EOF_MARKER.length + 4);
        IFileOutputStream checksummed = new IFileOutputStream(framed);
        byte[] copy = new byte[length];
        batch.getBytes(batch.readerIndex(), copy);
        checksummed.write(copy);
        checksummed.write(EOF_MARKER);
        checksummed.finish();
        long rawLength = length + EOF_MARKER.length;
        MapOutput<K, V> out;
        while ((out = merger.reserve(runId, rawLength, 0)) == null) {
            // Memory frees when an in-memory merge ends, and the merge manager signals it on its own monitor. A merge
            // that failed frees nothing and signals nothing, so the wait is bounded and merge errors are looked at.
            synchronized (merger) {
                merger.wait(RESOURCE_WAIT_MS);
            }
            checkMerges();
        }
        try {
            out.shuffle(
                    host,
                    new ByteArrayInputStream(framed.toByteArray()),
                    framed.size(),
                    rawLength,
                    metrics,
                    context.getReporter());
        } catch (IOException | RuntimeException e) {
            out.abort();
            throw e;
        }
        out.commit();
    }

    private void reportLost(ShuffleClient client, ShuffleSpec spec, ShuffleDataLostException e) {
        LOG.warn(
                "Partition {} of {} cannot be read: {}",
                context.getReduceId().getTaskID().getId(),
                spec,
                e.getMessage());
        LostData.report(client, spec, e);
    }

    private void checkMerges() throws IOException {
        Throwable t = mergeError;
        if (t != null) throw new IOException("a merge of map outputs failed: " + t.getMessage(), t);
    }

    @Override
    public void reportException(Throwable t) {
        if (mergeError == null) mergeError = t;
    }

    @Override
    public void close() {}
}
