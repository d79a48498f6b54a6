package io.estuary.common.config;

import static io.estuary.common.config.ConfigEntry.Scope.CLIENT;

/**
 * Client settings. In Spark they are set as {@code spark.} + key, e.g. {@code spark.estuary.client.push.bufferSize}.
 */
public final class ClientConfig {
  private ClientConfig() {}

  public static final ConfigEntry<Long> PUSH_BUFFER_SIZE =
      ConfigEntry.builder("estuary.client.push.bufferSize", ConfigType.BYTES)
          .defaultValue("64k").scope(CLIENT).check(v -> v >= 1024 && v <= 64L << 20 ? null : "must be between 1k and 64m")
          .doc("Serialized records are buffered per partition in a map task and pushed once this much has gathered. "
              + "A record larger than this is pushed on its own.")
          .build();

  public static final ConfigEntry<Long> PUSH_MERGED_SIZE =
      ConfigEntry.builder("estuary.client.push.mergedSize", ConfigType.BYTES)
          .defaultValue("1m").scope(CLIENT).check(ConfigType.positive())
          .doc("At the end of a map task, the partial buffers bound for one worker are sent together in pushes of "
              + "up to this size, instead of one push per partition.")
          .build();

  public static final ConfigEntry<Long> PUSH_MAX_BYTES_IN_FLIGHT =
      ConfigEntry.builder("estuary.client.push.maxBytesInFlight", ConfigType.BYTES)
          .defaultValue("32m").scope(CLIENT).check(ConfigType.positive())
          .doc("Pushed but not yet acknowledged bytes per map task; a task waits before pushing more.")
          .build();

  public static final ConfigEntry<Integer> PUSH_RETRIES =
      ConfigEntry.builder("estuary.client.push.retries", ConfigType.INT)
          .defaultValue("3").scope(CLIENT).check(ConfigType.nonNegative())
          .doc("How often a failed push is retried (to the same location) before the map task fails.")
          .build();

  public static final ConfigEntry<Long> PUSH_RETRY_WAIT =
      ConfigEntry.builder("estuary.client.push.retryWait", ConfigType.DURATION_MS)
          .defaultValue("1s").scope(CLIENT)
          .doc("Wait before the first push retry; doubled for each further one.")
          .build();

  public static final ConfigEntry<String> COMPRESSION_CODEC =
      ConfigEntry.builder("estuary.client.compression.codec", ConfigType.STRING)
          .defaultValue("lz4").scope(CLIENT).check(ConfigType.oneOf("lz4", "none"))
          .doc("Compression of pushed batches: lz4 or none.")
          .build();

  public static final ConfigEntry<Integer> FETCH_MAX_CHUNKS_IN_FLIGHT =
      ConfigEntry.builder("estuary.client.fetch.maxChunksInFlight", ConfigType.INT)
          .defaultValue("3").scope(CLIENT).check(ConfigType.positive())
          .doc("Chunks a reduce task requests ahead of the one it is reading.")
          .build();

  public static final ConfigEntry<Long> APPLICATION_HEARTBEAT_INTERVAL =
      ConfigEntry.builder("estuary.client.application.heartbeatInterval", ConfigType.DURATION_MS)
          .defaultValue("30s").scope(CLIENT).check(ConfigType.positive())
          .doc("How often the driver tells the master that the application is alive.")
          .build();

  public static final ConfigEntry<Long> COMMIT_TIMEOUT =
      ConfigEntry.builder("estuary.client.commit.timeout", ConfigType.DURATION_MS)
          .defaultValue("300s").scope(CLIENT).check(ConfigType.positive())
          .doc("How long reducers wait for the stage-end commit of the shuffle they read.")
          .build();

  public static final ConfigEntry<Long> MASTER_WAIT =
      ConfigEntry.builder("estuary.client.master.wait", ConfigType.DURATION_MS)
          .defaultValue("30s").scope(CLIENT).check(ConfigType.positive())
          .doc("How long the driver keeps trying to reach a master before the job fails with a clear error.")
          .build();

  static void touch() {}
}
