package io.estuary.common.config;

import java.util.List;

/** Worker settings. */
public final class WorkerConfig {
    private WorkerConfig() {}

    public static final ConfigEntry<String> HOST = ConfigEntry.builder("estuary.worker.host", ConfigType.STRING)
            .defaultValue("")
            .doc("Host name or address the worker binds and advertises; empty means this machine's host name. "
                    + "Use a stable name (e.g. a DNS name) so that a restarted worker keeps its identity.")
            .build();

    public static final ConfigEntry<Integer> RPC_PORT = ConfigEntry.builder("estuary.worker.rpc.port", ConfigType.INT)
            .defaultValue("9098")
            .check(ConfigType.port())
            .doc("Port for control requests (reserve, commit). Fixed so a restarted worker comes back on it.")
            .build();

    public static final ConfigEntry<Integer> PUSH_PORT = ConfigEntry.builder("estuary.worker.push.port", ConfigType.INT)
            .defaultValue("9099")
            .check(ConfigType.port())
            .doc("Port that receives pushed data.")
            .build();

    public static final ConfigEntry<Integer> FETCH_PORT = ConfigEntry.builder(
                    "estuary.worker.fetch.port", ConfigType.INT)
            .defaultValue("9100")
            .check(ConfigType.port())
            .doc("Port that serves chunk fetches to reducers.")
            .build();

    public static final ConfigEntry<Integer> HTTP_PORT = ConfigEntry.builder("estuary.worker.http.port", ConfigType.INT)
            .defaultValue("9096")
            .check(ConfigType.port())
            .doc("Port of the worker's HTTP endpoint: Prometheus metrics at /metrics, JSON status at /api/status, "
                    + "and /health (503 naming what stalled). Give each worker on a host its own; 0 picks a free port.")
            .build();

    public static final ConfigEntry<Long> HEALTH_STALL_TIMEOUT = ConfigEntry.builder(
                    "estuary.worker.health.stallTimeout", ConfigType.DURATION_MS)
            .defaultValue("30s")
            .check(ConfigType.positive())
            .doc("Every second the worker hands a no-op task to each disk's flusher and each network thread; one "
                    + "that has not run it within this time is reported stalled, and /health answers 503. Queued flushes "
                    + "run first, so a disk that needs longer than this to drain its queue counts as stalled too.")
            .build();

    public static final ConfigEntry<List<String>> STORAGE_DIRS = ConfigEntry.builder(
                    "estuary.worker.storage.dirs", ConfigType.LIST)
            .check(l -> l.isEmpty() ? "must name at least one directory" : null)
            .doc("Comma-separated directories, one per disk. Each gets its own flusher threads. Required.")
            .build();

    public static final ConfigEntry<List<String>> TAGS = ConfigEntry.builder("estuary.worker.tags", ConfigType.LIST)
            .defaultValue("")
            .check(io.estuary.common.tags.TagExpression::tagsProblem)
            .doc("Comma-separated tags of this worker, `key` or `key=value` (letters, digits, _ . -): applications "
                    + "select workers by them (estuary.client.tags), e.g. team=analytics,release=canary,ssd.")
            .build();

    public static final ConfigEntry<Integer> FLUSH_THREADS_PER_DISK = ConfigEntry.builder(
                    "estuary.worker.flush.threadsPerDisk", ConfigType.INT)
            .defaultValue("1")
            .check(ConfigType.positive())
            .doc("Flusher threads per storage directory. One per HDD; more for SSDs.")
            .build();

    public static final ConfigEntry<Long> FLUSH_BUFFER_SIZE = ConfigEntry.builder(
                    "estuary.worker.flush.bufferSize", ConfigType.BYTES)
            .defaultValue("1m")
            .check(v -> v >= 4096 && v <= 256L << 20 ? null : "must be between 4k and 256m")
            .doc("Pushed data is merged per partition in memory and written once this much has gathered.")
            .build();

    public static final ConfigEntry<String> FLUSH_DIRECT_IO = ConfigEntry.builder(
                    "estuary.worker.flush.directIo", ConfigType.STRING)
            .defaultValue("replicas")
            .check(ConfigType.oneOf("none", "replicas", "all"))
            .doc("Which partition copies are written with O_DIRECT, bypassing the page cache: none, replicas (read "
                    + "only when their primary is lost) or all. A write through the page cache costs the kernel a copy "
                    + "and its bookkeeping, about a CPU-second per GB, on the cores the engine's tasks share; a copy "
                    + "written directly is read from the device rather than from memory. A directory whose file "
                    + "system does not take direct writes (tmpfs) is written through the page cache.")
            .build();

    public static final ConfigEntry<Long> CHUNK_SIZE = ConfigEntry.builder(
                    "estuary.worker.fetch.chunkSize", ConfigType.BYTES)
            .defaultValue("8m")
            .check(v -> v >= 1024 && v <= 1L << 30 ? null : "must be between 1k and 1g")
            .doc("Reducers read a partition in chunks of about this size (chunks end on batch boundaries).")
            .build();

    public static final ConfigEntry<Long> MAP_INDEX_GRANULARITY = ConfigEntry.builder(
                    "estuary.worker.fetch.mapIndexGranularity", ConfigType.BYTES)
            .defaultValue("64k")
            .check(ConfigType.nonNegative())
            .doc(
                    "Each partition file is indexed by map in regions of about this size (the smallest and largest map "
                            + "id of the batches in each), so a read of a range of maps (Spark's local shuffle reader, a skew "
                            + "split) is served only the regions that may hold those maps instead of the whole file. Smaller "
                            + "regions read less for such reads and cost more heap: 16 bytes per region. 0 turns the index off.")
            .build();

    public static final ConfigEntry<Integer> MAX_STREAMS_PER_CONNECTION = ConfigEntry.builder(
                    "estuary.worker.fetch.maxStreamsPerConnection", ConfigType.INT)
            .defaultValue("1000")
            .check(ConfigType.positive())
            .doc("Streams one reader connection may hold open at once. Opening one more is refused with RETRY_LATER "
                    + "until some end (a stream ends after its last chunk, when its reader closes it, when its connection "
                    + "closes, or estuary.worker.fetch.streamTimeout after its last fetch).")
            .build();

    public static final ConfigEntry<Long> STREAM_TIMEOUT = ConfigEntry.builder(
                    "estuary.worker.fetch.streamTimeout", ConfigType.DURATION_MS)
            .defaultValue("10min")
            .check(ConfigType.positive())
            .doc(
                    "A stream without a chunk request for this long is dropped (checked every tenth of it, at most every "
                            + "minute), so a reader that died without closing its stream does not hold it for good. A reader "
                            + "that was only slow (a long computation between two chunks) is not harmed: a chunk of a dropped "
                            + "stream is refused with UNKNOWN_STREAM, and the reader opens the stream again and goes on from there.")
            .build();

    public static final ConfigEntry<Long> PUSH_MAX_UNFINISHED = ConfigEntry.builder(
                    "estuary.worker.push.maxUnfinishedBytes", ConfigType.BYTES)
            .defaultValue("128m")
            .check(v -> v >= 1024 && v <= Integer.MAX_VALUE ? null : "must be between 1k and 2g")
            .doc(
                    "Most bytes one push-port connection may hold of a frame not yet fully received: the largest push "
                            + "(one batch, so above the largest record) a client or another worker may send. Lowered to a quarter "
                            + "of the memory limit (estuary.worker.memory.maxBuffered) when that is smaller, and never above "
                            + "estuary.network.maxFrameSize. A larger frame is refused (BAD_REQUEST) and its connection closed. A "
                            + "connection in the middle of a frame is read on until the frame is whole even while the worker "
                            + "pauses reading, and one that then sends nothing is closed after estuary.network.server.idleTimeout.")
            .build();

    public static final ConfigEntry<Long> MAX_BUFFERED_BYTES = ConfigEntry.builder(
                    "estuary.worker.memory.maxBuffered", ConfigType.BYTES)
            .defaultValue("1g")
            .check(ConfigType.positive())
            .doc("Off-heap memory the worker may hold for pushed data: flush buffers (their capacity), pushes being "
                    + "received or forwarded to replicas, and the small-partition cache. Lowered to half the JVM's "
                    + "direct memory limit (-XX:MaxDirectMemorySize) when that is smaller. Above the pause watermarks "
                    + "the worker stops reading pushes until flushes bring it below the resume watermark.")
            .build();

    public static final ConfigEntry<Double> MEMORY_PAUSE_PUSH = ConfigEntry.builder(
                    "estuary.worker.memory.pausePushRatio", ConfigType.DOUBLE)
            .defaultValue("0.85")
            .check(ConfigType.ratio())
            .doc("Share of estuary.worker.memory.maxBuffered above which the worker stops reading from clients' push "
                    + "connections and flushes its largest partly filled buffers.")
            .build();

    public static final ConfigEntry<Double> MEMORY_PAUSE_REPLICATE = ConfigEntry.builder(
                    "estuary.worker.memory.pauseReplicateRatio", ConfigType.DOUBLE)
            .defaultValue("0.95")
            .check(ConfigType.ratio())
            .doc("Share of estuary.worker.memory.maxBuffered above which the worker also stops reading from other "
                    + "workers' replication connections. Higher than the push ratio: replicas carry data that primaries "
                    + "already hold, and pausing them holds up every client of those primaries.")
            .build();

    public static final ConfigEntry<Double> MEMORY_RESUME = ConfigEntry.builder(
                    "estuary.worker.memory.resumeRatio", ConfigType.DOUBLE)
            .defaultValue("0.7")
            .check(ConfigType.ratio())
            .doc("Share of estuary.worker.memory.maxBuffered below which every paused connection resumes. Must be "
                    + "below the pause ratios, so the worker does not flap between states.")
            .build();
    // The worker's own check (MemoryPressure.Watermarks) refuses to start otherwise; ConfigCheck says it before.
    public static final ConfigRule MEMORY_RESUME_BELOW_PAUSE = ConfigRule.below(MEMORY_RESUME, MEMORY_PAUSE_PUSH);
    public static final ConfigRule MEMORY_PAUSE_PUSH_NOT_ABOVE_REPLICATE =
            ConfigRule.atMost(MEMORY_PAUSE_PUSH, MEMORY_PAUSE_REPLICATE);

    public static final ConfigEntry<Long> FLUSH_MAX_AGE = ConfigEntry.builder(
                    "estuary.worker.flush.maxAge", ConfigType.DURATION_MS)
            .defaultValue("10s")
            .check(ConfigType.positive())
            .doc("A partly filled flush buffer older than this is written out, so the memory of partitions that "
                    + "receive little data is not held until commit.")
            .build();

    public static final ConfigEntry<Boolean> CONGESTION_ENABLED = ConfigEntry.builder(
                    "estuary.worker.congestion.enabled", ConfigType.BOOLEAN)
            .defaultValue("true")
            .doc("Tell applications (and users) that push much faster than others to slow down (status CONGESTED on "
                    + "the acknowledgement; clients then hold back their next pushes).")
            .build();

    public static final ConfigEntry<Long> CONGESTION_WINDOW = ConfigEntry.builder(
                    "estuary.worker.congestion.window", ConfigType.DURATION_MS)
            .defaultValue("10s")
            .check(v -> v >= 1000 ? null : "must be at least 1s")
            .doc("The sliding window over which push rates per application and per user are measured.")
            .build();

    public static final ConfigEntry<Long> CONGESTION_FORGET_IDLE_APPLICATION = ConfigEntry.builder(
                    "estuary.worker.congestion.forgetIdleApplicationAfter", ConfigType.DURATION_MS)
            .defaultValue("10min")
            .check(ConfigType.positive())
            .doc("The worker forgets who runs an application (for per-user rates) once it has neither reserved slots "
                    + "nor pushed for this long: long enough to outlast pauses between an application's stages, short "
                    + "enough that the per-application state of departed (or long-lived, idle) applications goes.")
            .build();

    public static final ConfigEntry<Long> CONGESTION_APP_MAX_RATE = ConfigEntry.builder(
                    "estuary.worker.congestion.appMaxRate", ConfigType.BYTES)
            .defaultValue("0")
            .check(ConfigType.nonNegative())
            .doc("Bytes per second one application may push to this worker before it is told to slow down; 0: no "
                    + "fixed cap (the fair-share rule still applies).")
            .build();

    public static final ConfigEntry<Long> CONGESTION_USER_MAX_RATE = ConfigEntry.builder(
                    "estuary.worker.congestion.userMaxRate", ConfigType.BYTES)
            .defaultValue("0")
            .check(ConfigType.nonNegative())
            .doc("Bytes per second all applications of one user may push to this worker before they are told to "
                    + "slow down; 0: no fixed cap.")
            .build();

    public static final ConfigEntry<Double> CONGESTION_FAIR_SHARE = ConfigEntry.builder(
                    "estuary.worker.congestion.fairShareFactor", ConfigType.DOUBLE)
            .defaultValue("2.0")
            .check(d -> d >= 1 ? null : "must be at least 1")
            .doc("While the worker's memory is above its resume watermark, an application (or user) pushing more "
                    + "than this many times the average of the others pushing is told to slow down.")
            .build();

    public static final ConfigEntry<Boolean> CONGESTION_ENFORCE = ConfigEntry.builder(
                    "estuary.worker.congestion.enforce", ConfigType.BOOLEAN)
            .defaultValue("true")
            .doc("Enforce the rate an application told to slow down may push (the cap or its fair share): its "
                    + "connections are not read until its pushes fit that rate, so a client that ignores CONGESTED is "
                    + "slowed by the worker instead of trusted to slow itself. Connections carrying replicas between "
                    + "workers are never held.")
            .build();

    public static final ConfigEntry<Long> CONGESTION_MAX_HOLD = ConfigEntry.builder(
                    "estuary.worker.congestion.maxHold", ConfigType.DURATION_MS)
            .defaultValue("2s")
            .check(ConfigType.positive())
            .doc("The longest an enforced application's connection is left unread at a time (and the most pushing "
                    + "debt it carries): well below the clients' push timeout, so a held push is late, never failed.")
            .build();

    public static final ConfigEntry<Long> DISK_RESERVE = ConfigEntry.builder(
                    "estuary.worker.disk.reserve", ConfigType.BYTES)
            .defaultValue("1g")
            .doc("A storage directory with less usable space than this is reported full and gets no new slots.")
            .build();

    public static final ConfigEntry<Long> DISK_CHECK_INTERVAL = ConfigEntry.builder(
                    "estuary.worker.disk.check.interval", ConfigType.DURATION_MS)
            .defaultValue("3s")
            .check(ConfigType.positive())
            .doc("How often each storage directory is probed (a small write + fsync + delete, and its free space). "
                    + "A disk whose state changes is reported to the master at once, so a failed, full or slow disk "
                    + "gets no new slots within about interval + estuary.worker.disk.check.timeout.")
            .build();

    public static final ConfigEntry<Long> DISK_CHECK_TIMEOUT = ConfigEntry.builder(
                    "estuary.worker.disk.check.timeout", ConfigType.DURATION_MS)
            .defaultValue("5s")
            .check(ConfigType.positive())
            .doc("A disk probe that has not finished after this long marks the disk failed (a hung disk). It is "
                    + "used again once a probe finishes healthy.")
            .build();

    public static final ConfigEntry<Long> DISK_SLOW_THRESHOLD = ConfigEntry.builder(
                    "estuary.worker.disk.check.slowThreshold", ConfigType.DURATION_MS)
            .defaultValue("2s")
            .check(ConfigType.positive())
            .doc(
                    "A disk probe slower than this reports the disk slow: it gets no new slots, but keeps serving and "
                            + "taking data for the partitions already on it. Should be below estuary.worker.disk.check.timeout.")
            .build();
    public static final ConfigRule DISK_SLOW_BELOW_HUNG = ConfigRule.below(DISK_SLOW_THRESHOLD, DISK_CHECK_TIMEOUT);

    public static final ConfigEntry<Integer> FETCH_THREADS_PER_DISK = ConfigEntry.builder(
                    "estuary.worker.fetch.threadsPerDisk", ConfigType.INT)
            .defaultValue("4")
            .check(ConfigType.positive())
            .doc("Threads per storage directory that serve readers from disk (stream opens and chunk reads queue per "
                    + "disk): they open and check partition files and read each chunk's bytes, which then go out by "
                    + "sendfile from the page cache. So a slow disk delays only its own readers, not a network thread "
                    + "(short of the kernel evicting the pages just read before they are sent).")
            .build();

    public static final ConfigEntry<Long> HEARTBEAT_INTERVAL = ConfigEntry.builder(
                    "estuary.worker.heartbeat.interval", ConfigType.DURATION_MS)
            .defaultValue("10s")
            .check(ConfigType.positive())
            .doc("How often a worker reports its disks and shuffles to the master.")
            .build();

    public static final ConfigEntry<Long> SPLIT_SOFT_SIZE = ConfigEntry.builder(
                    "estuary.worker.split.softSize", ConfigType.BYTES)
            .defaultValue("1g")
            .check(ConfigType.positive())
            .doc("A partition file larger than this tells its writers to split: they get the partition's next epoch "
                    + "on another worker in the background and keep pushing here meanwhile. One huge partition so "
                    + "spreads over many workers and disks.")
            .build();

    public static final ConfigEntry<Long> SPLIT_HARD_SIZE = ConfigEntry.builder(
                    "estuary.worker.split.hardSize", ConfigType.BYTES)
            .defaultValue("2g")
            .check(ConfigType.positive())
            .doc("A partition file this large takes no more data: pushes are refused with a split status and the "
                    + "writers move to a new epoch before going on. Must be at least estuary.worker.split.softSize.")
            .build();
    public static final ConfigRule SPLIT_SOFT_NOT_ABOVE_HARD = ConfigRule.atMost(SPLIT_SOFT_SIZE, SPLIT_HARD_SIZE);

    public static final ConfigEntry<String> META_DIR = ConfigEntry.builder("estuary.worker.meta.dir", ConfigType.STRING)
            .defaultValue("")
            .doc("Directory of the worker's metadata store (RocksDB): every committed partition file, so a worker "
                    + "restarted on the same host, ports and disks serves them again. Empty means a .estuary-meta "
                    + "directory inside the first storage directory.")
            .build();

    public static final ConfigEntry<Long> COMMIT_MAX_WAIT = ConfigEntry.builder(
                    "estuary.worker.commit.maxWait", ConfigType.DURATION_MS)
            .defaultValue("60s")
            .check(ConfigType.positive())
            .doc("A commit is answered within this long with what is on disk by then; locations whose writes have not "
                    + "finished are reported pending (the driver waits on them, asking again, within "
                    + "estuary.client.commit.timeout; a location that never commits is read from its replica, or its "
                    + "stage reruns). Writes waiting for a "
                    + "disk declared failed or hung are given up at once. Keep it below estuary.network.rpc.timeout, so "
                    + "the driver gets an answer rather than a timeout.")
            .build();
    public static final ConfigRule COMMIT_WAIT_BELOW_RPC_TIMEOUT =
            ConfigRule.below(COMMIT_MAX_WAIT, NetworkConfig.RPC_TIMEOUT);

    public static final ConfigEntry<Long> SHUTDOWN_TIMEOUT = ConfigEntry.builder(
                    "estuary.worker.shutdown.timeout", ConfigType.DURATION_MS)
            .defaultValue("20s")
            .check(ConfigType.positive())
            .doc("On SIGTERM the worker refuses new pushes (writers move elsewhere), then waits at most this long for "
                    + "pushes in progress, flushes and commits before it records its files and exits. Keep it below "
                    + "the time sbin/stop-worker.sh waits before it kills the process.")
            .build();

    public static final ConfigEntry<Long> DECOMMISSION_TIMEOUT = ConfigEntry.builder(
                    "estuary.worker.decommission.timeout", ConfigType.DURATION_MS)
            .defaultValue("6h")
            .check(ConfigType.positive())
            .doc("A decommissioning worker gets no new slots and exits once the master has expired every shuffle it "
                    + "holds, or after this long, whichever comes first.")
            .build();

    public static final ConfigEntry<Boolean> CACHE_ENABLED = ConfigEntry.builder(
                    "estuary.worker.cache.enabled", ConfigType.BOOLEAN)
            .defaultValue("true")
            .doc("Keep small committed partitions (see estuary.worker.cache.maxPartitionSize) in memory and serve "
                    + "them from there, so reads of a few KB never wait behind a busy disk's read queue. The cache is "
                    + "counted in estuary.worker.memory.maxBuffered and emptied before it could make the worker pause "
                    + "pushes.")
            .build();

    public static final ConfigEntry<Long> CACHE_MAX_BYTES = ConfigEntry.builder(
                    "estuary.worker.cache.maxBytes", ConfigType.BYTES)
            .defaultValue("256m")
            .check(ConfigType.positive())
            .doc("Most off-heap memory the small-partition cache holds; never more than a fifth of the worker's "
                    + "memory limit (estuary.worker.memory.maxBuffered). The least recently read partitions go first.")
            .build();

    public static final ConfigEntry<Long> CACHE_MAX_PARTITION_SIZE = ConfigEntry.builder(
                    "estuary.worker.cache.maxPartitionSize", ConfigType.BYTES)
            .defaultValue("1m")
            .check(ConfigType.positive())
            .doc("Committed partition files no larger than this are read once into the cache after their commit.")
            .build();
    public static final ConfigRule CACHED_PARTITION_NOT_ABOVE_CACHE =
            ConfigRule.atMost(CACHE_MAX_PARTITION_SIZE, CACHE_MAX_BYTES);

    public static final ConfigEntry<Boolean> COMMIT_FROM_MEMORY = ConfigEntry.builder(
                    "estuary.worker.commit.fromMemory", ConfigType.BOOLEAN)
            .defaultValue("true")
            .doc("The primary copy of a replicated small partition (one that never filled a flush buffer, at most "
                    + "estuary.worker.cache.maxPartitionSize) commits once its bytes are in the small-partition "
                    + "cache, and is written to its file right after, instead of the commit waiting for the disk; "
                    + "readers are served from memory meanwhile. A crash of this worker before that write loses the "
                    + "copy, and readers then use its replica. Copies without a replica always commit from disk. "
                    + "Needs estuary.worker.cache.enabled.")
            .build();

    public static final ConfigEntry<Boolean> REPLICA_HOLD_IN_MEMORY = ConfigEntry.builder(
                    "estuary.worker.replica.holdInMemory", ConfigType.BOOLEAN)
            .defaultValue("true")
            .doc("Keep the replica copy of a small partition (one that never filled a flush buffer, at most "
                    + "estuary.worker.cache.maxPartitionSize) in the small-partition cache at its commit instead of "
                    + "writing its file: it is read only if its primary is lost. It is written to disk when the cache "
                    + "needs the room or memory runs short, and on a graceful stop; a crash of this worker loses it, "
                    + "and readers then use the primary. Needs estuary.worker.cache.enabled.")
            .build();

    static void touch() {}
}
