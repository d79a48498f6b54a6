package org.apache.spark.shuffle.estuary;

/**
 * A reduce task's shuffle read metrics, whatever this Spark line calls them ({@link SparkLine#readMetrics}). Used by
 * the task's thread only.
 */
interface ReadMetrics {
  void remoteBytesRead(long bytes);

  void remoteBlocksFetched(int blocks);

  void fetchWaitMillis(long ms);

  void recordsRead(long records);

  /** The task is over: hands what was counted to the task's metrics where Spark wants that done explicitly. */
  void complete();
}
