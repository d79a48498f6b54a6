package org.apache.spark.shuffle.estuary;

/**
 * A reduce task's shuffle read metrics on Spark 1.6 / 2.4, whatever the line calls them ({@link SparkLine#readMetrics}),
 * counting what every Spark line counts ({@link SparkReadMetrics}). Used by the task's thread only.
 */
interface ReadMetrics extends SparkReadMetrics {
    /** The task is over: hands what was counted to the task's metrics where Spark wants that done explicitly. */
    void complete();
}
