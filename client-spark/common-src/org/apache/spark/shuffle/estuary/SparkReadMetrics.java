package org.apache.spark.shuffle.estuary;

import io.estuary.client.engine.ReadMetricsSink;

/**
 * A reduce task's shuffle read metrics, whatever the Spark line calls them: what Estuary fetched (each chunk counts as
 * one remote block) and the records read. Every Spark line counts the same things. Used by the task's thread only.
 */
interface SparkReadMetrics extends ReadMetricsSink {
    void recordsRead(long records);
}
