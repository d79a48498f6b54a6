package io.estuary.mr;

import java.io.IOException;
import org.apache.hadoop.mapred.Counters;
import org.apache.hadoop.mapred.InputSplit;
import org.apache.hadoop.mapred.Reporter;

/**
 * Estuary's shuffle consumer, except that the first attempt of reduce 0 fails in the middle of reading its
 * partition once a merge has written records to local disk (the reduce-side spilled records counter moved): some of
 * what it fetched is merged on disk, some in memory, some not read yet. It fails from the progress reports the merge
 * manager makes while taking a run, so the test needs no hook in the consumer. Used by one reduce task's thread.
 */
public final class FailingAfterMergeConsumer<K, V> extends EstuaryShuffleConsumer<K, V> {
  @Override
  public void init(Context<K, V> c) {
    if (c.getReduceId().getTaskID().getId() != 0 || c.getReduceId().getId() != 0) {
      super.init(c);
      return;
    }
    Reporter failing = new FailingReporter(c.getReporter(), c.getSpilledRecordsCounter());
    super.init(new Context<>(c.getReduceId(), c.getJobConf(), c.getLocalFS(), c.getUmbilical(),
        c.getLocalDirAllocator(), failing, c.getCodec(), c.getCombinerClass(), c.getCombineCollector(),
        c.getSpilledRecordsCounter(), c.getReduceCombineInputCounter(), c.getShuffledMapsCounter(),
        c.getReduceShuffleBytes(), c.getFailedShuffleCounter(), c.getMergedMapOutputsCounter(), c.getStatus(),
        c.getCopyPhase(), c.getMergePhase(), c.getReduceTask(), c.getMapOutputFile(), c.getLocalMapFiles()));
  }

  /** Fails the first progress report after the spilled records counter moved. */
  private static final class FailingReporter implements Reporter {
    private final Reporter real;
    private final Counters.Counter spilled;

    FailingReporter(Reporter real, Counters.Counter spilled) {
      this.real = real;
      this.spilled = spilled;
    }

    @Override
    public void progress() {
      if (spilled.getValue() > 0) {
        throw new IllegalStateException("reduce 0 fails on purpose after a merge spilled " + spilled.getValue()
            + " records to disk");
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
