package io.estuary.mr;

import io.estuary.client.lifecycle.LifecycleManager;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.hadoop.mapred.JobConf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lifecycle manager of local mode ({@code mapreduce.framework.name=local}), where LocalJobRunner runs every
 * task inside the job client's JVM: one per JVM, started by the first task that needs it and stopped when the JVM
 * exits. Each job is one engine shuffle of it, numbered in the order jobs first touch Estuary; a job's shuffle is
 * forgotten (its data deleted) once all its reducers have read it. The first job's configuration configures it
 * (masters and client settings) for every later job of the JVM. Thread-safe.
 */
final class LocalLifecycles {
  private static final Logger LOG = LoggerFactory.getLogger(LocalLifecycles.class);
  private static LifecycleManager lifecycle;
  private static final Map<String, Integer> shuffleIds = new HashMap<>();
  private static final Map<String, Integer> reducersDone = new HashMap<>();

  private LocalLifecycles() {}

  static synchronized LifecycleManager get(JobConf job) {
    if (lifecycle == null) {
      String appId = "mr-local-" + UUID.randomUUID().toString().substring(0, 8);
      LifecycleManager lm = new LifecycleManager(appId, MrConfBridge.toEstuaryConf(job), "127.0.0.1");
      lifecycle = lm;
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        try {
          lm.close();
        } catch (RuntimeException e) {
          LOG.warn("Stopping the local Estuary lifecycle manager failed: {}", e.getMessage());
        }
      }, "estuary-local-lifecycle-stop"));
    }
    return lifecycle;
  }

  static synchronized int shuffleId(String jobId) {
    Integer id = shuffleIds.get(jobId);
    if (id == null) {
      id = shuffleIds.size();
      shuffleIds.put(jobId, id);
    }
    return id;
  }

  /** How many jobs have used Estuary in this JVM (for tests). */
  static synchronized int jobsSeen() {
    return shuffleIds.size();
  }

  /** A reducer of {@code jobId} read its partition; after the last one the job's data is deleted. */
  static synchronized void reducerDone(String jobId, int numReducers) {
    int done = reducersDone.merge(jobId, 1, Integer::sum);
    if (done == numReducers && lifecycle != null) {
      lifecycle.unregisterShuffle(shuffleId(jobId));
      reducersDone.remove(jobId);
    }
  }
}
