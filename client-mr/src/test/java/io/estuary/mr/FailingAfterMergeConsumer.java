package io.estuary.mr;

import org.apache.hadoop.mapred.Counters;
import org.apache.hadoop.mapred.InputSplit;
import org.apache.hadoop.mapred.Reporter;

/**
 * Estuary's shuffle consumer, except that the first attempt of reduce 0 fails while a merge writes fetched runs to
 * local disk, in the middle of reading its partition: some of what it fetched is merged on disk, some held in
 * memory, some not read yet. The merge manager reports progress to the task's reporter from its merge thread every
 * 10,000 records it writes; the reporter given here fails there, so the failure comes the way a real merge failure
 * does (through {@link #reportException}) and the test needs no hook in the consumer. Used by one reduce task's
 * thread.
 */
public final class FailingAfterMergeConsumer<K, V> extends EstuaryShuffleConsumer<K, V> {
    @Override
    public void init(Context<K, V> c) {
        if (c.getReduceId().getTaskID().getId() != 0 || c.getReduceId().getId() != 0) {
            super.init(c);
            return;
        }
        Reporter failing = new FailingReporter(c.getReporter(), Thread.currentThread());
        super.init(new Context<>(
                c.getReduceId(),
                c.getJobConf(),
                c.getLocalFS(),
                c.getUmbilical(),
                c.getLocalDirAllocator(),
                failing,
                c.getCodec(),
                c.getCombinerClass(),
                c.getCombineCollector(),
                c.getSpilledRecordsCounter(),
                c.getReduceCombineInputCounter(),
                c.getShuffledMapsCounter(),
                c.getReduceShuffleBytes(),
                c.getFailedShuffleCounter(),
                c.getMergedMapOutputsCounter(),
                c.getStatus(),
                c.getCopyPhase(),
                c.getMergePhase(),
                c.getReduceTask(),
                c.getMapOutputFile(),
                c.getLocalMapFiles()));
    }

    /** Fails a progress report made by any thread but the reduce task's own (that is, by a merge). */
    private static final class FailingReporter implements Reporter {
        private final Reporter real;
        private final Thread task;

        FailingReporter(Reporter real, Thread task) {
            this.real = real;
            this.task = task;
        }

        @Override
        public void progress() {
            if (Thread.currentThread() != task) {
                throw new IllegalStateException("reduce 0 fails on purpose while a merge writes to local disk");
            }
            real.progress();
        }

        @Override
        public void setStatus(String status) {
            real.setStatus(status);
        }

        @Override
        public Counters.Counter getCounter(Enum<?> name) {
            return real.getCounter(name);
        }

        @Override
        public Counters.Counter getCounter(String group, String name) {
            return real.getCounter(group, name);
        }

        @Override
        public void incrCounter(Enum<?> key, long amount) {
            real.incrCounter(key, amount);
        }

        @Override
        public void incrCounter(String group, String counter, long amount) {
            real.incrCounter(group, counter, amount);
        }

        @Override
        public InputSplit getInputSplit() {
            return real.getInputSplit();
        }

        @Override
        public float getProgress() {
            return real.getProgress();
        }
    }
}
