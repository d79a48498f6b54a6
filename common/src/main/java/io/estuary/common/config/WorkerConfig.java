package io.estuary.common.config;

import java.util.List;

/** Worker settings. */
public final class WorkerConfig {
  private WorkerConfig() {}

  public static final ConfigEntry<String> HOST =
      ConfigEntry.builder("estuary.worker.host", ConfigType.STRING)
          .defaultValue("")
          .doc("Host name or address the worker binds and advertises; empty means this machine's host name. "
              + "Use a stable name (e.g. a DNS name) so that a restarted worker keeps its identity.")
          .build();

  public static final ConfigEntry<Integer> RPC_PORT =
      ConfigEntry.builder("estuary.worker.rpc.port", ConfigType.INT)
          .defaultValue("9098").check(ConfigType.port())
          .doc("Port for control requests (reserve, commit). Fixed so a restarted worker comes back on it.")
          .build();

  public static final ConfigEntry<Integer> PUSH_PORT =
      ConfigEntry.builder("estuary.worker.push.port", ConfigType.INT)
          .defaultValue("9099").check(ConfigType.port())
          .doc("Port that receives pushed data.")
          .build();

  public static final ConfigEntry<Integer> FETCH_PORT =
      ConfigEntry.builder("estuary.worker.fetch.port", ConfigType.INT)
          .defaultValue("9100").check(ConfigType.port())
          .doc("Port that serves chunk fetches to reducers.")
          .build();

  public static final ConfigEntry<List<String>> STORAGE_DIRS =
      ConfigEntry.builder("estuary.worker.storage.dirs", ConfigType.LIST)
          .check(l -> l.isEmpty() ? "must name at least one directory" : null)
          .doc("Comma-separated directories, one per disk. Each gets its own flusher threads. Required.")
          .build();

  public static final ConfigEntry<Integer> FLUSH_THREADS_PER_DISK =
      ConfigEntry.builder("estuary.worker.flush.threadsPerDisk", ConfigType.INT)
          .defaultValue("1").check(ConfigType.positive())
          .doc("Flusher threads per storage directory. One per HDD; more for SSDs.")
          .build();

  public static final ConfigEntry<Long> FLUSH_BUFFER_SIZE =
      ConfigEntry.builder("estuary.worker.flush.bufferSize", ConfigType.BYTES)
          .defaultValue("1m").check(v -> v >= 4096 && v <= 256L << 20 ? null : "must be between 4k and 256m")
          .doc("Pushed data is merged per partition in memory and written once this much has gathered.")
          .build();

  public static final ConfigEntry<Long> CHUNK_SIZE =
      ConfigEntry.builder("estuary.worker.fetch.chunkSize", ConfigType.BYTES)
          .defaultValue("8m").check(v -> v >= 1024 && v <= 1L << 30 ? null : "must be between 1k and 1g")
          .doc("Reducers read a partition in chunks of about this size (chunks end on batch boundaries).")
          .build();

  public static final ConfigEntry<Long> MAX_BUFFERED_BYTES =
      ConfigEntry.builder("estuary.worker.memory.maxBuffered", ConfigType.BYTES)
          .defaultValue("1g").check(ConfigType.positive())
          .doc("Pushed data held in memory (waiting to be flushed) above which pushes are refused with a "
              + "retryable busy error, so a worker slows writers down instead of running out of memory.")
          .build();

  public static final ConfigEntry<Long> DISK_RESERVE =
      ConfigEntry.builder("estuary.worker.disk.reserve", ConfigType.BYTES)
          .defaultValue("1g")
          .doc("A storage directory with less usable space than this is reported full and gets no new slots.")
          .build();

  public static final ConfigEntry<Long> DISK_CHECK_INTERVAL =
      ConfigEntry.builder("estuary.worker.disk.check.interval", ConfigType.DURATION_MS)
          .defaultValue("3s").check(ConfigType.positive())
          .doc("How often each storage directory is probed (a small write + fsync + delete, and its free space). "
              + "A disk whose state changes is reported to the master at once, so a failed, full or slow disk "
              + "gets no new slots within about interval + estuary.worker.disk.check.timeout.")
          .build();

  public static final ConfigEntry<Long> DISK_CHECK_TIMEOUT =
      ConfigEntry.builder("estuary.worker.disk.check.timeout", ConfigType.DURATION_MS)
          .defaultValue("5s").check(ConfigType.positive())
          .doc("A disk probe that has not finished after this long marks the disk failed (a hung disk). It is "
              + "used again once a probe finishes healthy.")
          .build();

  public static final ConfigEntry<Long> DISK_SLOW_THRESHOLD =
      ConfigEntry.builder("estuary.worker.disk.check.slowThreshold", ConfigType.DURATION_MS)
          .defaultValue("2s").check(ConfigType.positive())
          .doc("A disk probe slower than this reports the disk slow: it gets no new slots, but keeps serving and "
              + "taking data for the partitions already on it. Should be below estuary.worker.disk.check.timeout.")
          .build();

  public static final ConfigEntry<Integer> FETCH_THREADS_PER_DISK =
      ConfigEntry.builder("estuary.worker.fetch.threadsPerDisk", ConfigType.INT)
          .defaultValue("4").check(ConfigType.positive())
          .doc("Threads per storage directory that open partition files for readers (stream opens and chunk "
              + "reads queue per disk), so a slow disk delays only its own readers and never a network thread.")
          .build();

  public static final ConfigEntry<Long> HEARTBEAT_INTERVAL =
      ConfigEntry.builder("estuary.worker.heartbeat.interval", ConfigType.DURATION_MS)
          .defaultValue("10s").check(ConfigType.positive())
          .doc("How often a worker reports its disks and shuffles to the master.")
          .build();

  public static final ConfigEntry<Long> SPLIT_SOFT_SIZE =
      ConfigEntry.builder("estuary.worker.split.softSize", ConfigType.BYTES)
          .defaultValue("1g").check(ConfigType.positive())
          .doc("A partition file larger than this tells its writers to split: they get the partition's next epoch "
              + "on another worker in the background and keep pushing here meanwhile. One huge partition so "
              + "spreads over many workers and disks.")
          .build();

  public static final ConfigEntry<Long> SPLIT_HARD_SIZE =
      ConfigEntry.builder("estuary.worker.split.hardSize", ConfigType.BYTES)
          .defaultValue("2g").check(ConfigType.positive())
          .doc("A partition file this large takes no more data: pushes are refused with a split status and the "
              + "writers move to a new epoch before going on. Must be at least estuary.worker.split.softSize.")
          .build();

  static void touch() {}
}
