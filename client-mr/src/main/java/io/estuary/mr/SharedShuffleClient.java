package io.estuary.mr;

import io.estuary.client.ShuffleClient;
import org.apache.hadoop.mapred.JobConf;

/**
 * The process's one {@link ShuffleClient}, shared by the tasks running in it (one on YARN, several at once under
 * LocalJobRunner) and closed when the last of them lets go, so no connection or thread outlives the tasks. The
 * first task's job configuration configures it. Thread-safe.
 */
final class SharedShuffleClient {
  private static ShuffleClient client;
  private static int users;

  private SharedShuffleClient() {}

  static synchronized ShuffleClient acquire(JobConf job) {
    if (client == null) client = new ShuffleClient(MrConfBridge.toEstuaryConf(job));
    users++;
    return client;
  }

  static synchronized void release(ShuffleClient c) {
    if (c != client) return;
    if (--users == 0) {
      client.close();
      client = null;
    }
  }
}
