/**
 * What every engine adapter (Spark 3/4, Spark 1.6/2.4, MapReduce) shares: configuration from the engine's prefixed
 * keys ({@link io.estuary.client.engine.EngineConf}), the process-wide {@link io.estuary.client.ShuffleServices}
 * ({@link io.estuary.client.engine.ProcessServices}), reporting lost data to the lifecycle manager
 * ({@link io.estuary.client.engine.LostData}) and a batch stream that reports what it fetched to the engine's own
 * metrics ({@link io.estuary.client.engine.MeteredBatches}, {@link io.estuary.client.engine.ReadMetricsSink}). An
 * adapter then only translates between its engine and Estuary.
 */
package io.estuary.client.engine;
