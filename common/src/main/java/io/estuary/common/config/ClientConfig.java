package io.estuary.common.config;

import static io.estuary.common.config.ConfigEntry.Scope.CLIENT;

/**
 * Client settings. In Spark they are set as {@code spark.} + key, e.g. {@code spark.estuary.client.push.bufferSize}.
 */
public final class ClientConfig {
    private ClientConfig() {}

    public static final ConfigEntry<String> USER = ConfigEntry.builder("estuary.client.user", ConfigType.STRING)
            .defaultValue("")
            .scope(CLIENT)
            .doc("Who runs the application. Empty: the engine's user (Spark's spark user, Hadoop's job user), else "
                    + "the JVM's user.name. Bound to the application when it registers: masters refuse any later claim "
                    + "of another user for it, and workers take it from the masters (congestion control per user).")
            .build();

    public static final ConfigEntry<String> TENANT = ConfigEntry.builder("estuary.client.tenant", ConfigType.STRING)
            .defaultValue("")
            .scope(CLIENT)
            .doc("The team or tenant the application runs for, bound with its user when it registers. Empty: none.")
            .build();

    public static final ConfigEntry<Boolean> HIGH_PRIORITY = ConfigEntry.builder(
                    "estuary.client.highPriority", ConfigType.BOOLEAN)
            .defaultValue("false")
            .scope(CLIENT)
            .doc("Marks the application high priority, bound with its user when it registers: a quota whose "
                    + "overBytes policy stops the largest shuffles of applications over it never stops this one's "
                    + "(they are told, as the others are). Shown in estuary apps.")
            .build();

    public static final ConfigEntry<String> TAGS = ConfigEntry.builder("estuary.client.tags", ConfigType.STRING)
            .defaultValue("")
            .check(io.estuary.common.tags.TagExpression::problem)
            .scope(CLIENT)
            .doc("Which workers the application's shuffles may use: a tag expression over the workers' "
                    + "estuary.worker.tags (`team=a & !release=canary`, `zone in {a, b}`, `ssd | nvme`; & binds "
                    + "tighter than |). A shuffle no active worker matches fails, naming the expression. Empty: any "
                    + "worker.")
            .build();

    public static final ConfigEntry<Long> CONGESTION_MAX_DELAY = ConfigEntry.builder(
                    "estuary.client.push.congestionMaxDelay", ConfigType.DURATION_MS)
            .defaultValue("1s")
            .check(ConfigType.nonNegative())
            .scope(CLIENT)
            .doc("A map told by a worker that its application pushes too fast holds back its next pushes, from 50 ms "
                    + "doubling up to this while the worker keeps saying so. 0 ignores congestion signals.")
            .build();

    public static final ConfigEntry<Long> PUSH_BUFFER_SIZE = ConfigEntry.builder(
                    "estuary.client.push.bufferSize", ConfigType.BYTES)
            .defaultValue("64k")
            .scope(CLIENT)
            .check(v -> v >= 1024 && v <= 64L << 20 ? null : "must be between 1k and 64m")
            .doc("Serialized records are buffered per partition in a map task and pushed once this much has gathered. "
                    + "A record larger than this is pushed on its own.")
            .build();

    public static final ConfigEntry<Long> PUSH_MAX_BUFFERED = ConfigEntry.builder(
                    "estuary.client.push.maxBufferedBytes", ConfigType.BYTES)
            .defaultValue("32m")
            .scope(CLIENT)
            .check(ConfigType.positive())
            .doc("The most a map task holds in partly filled partition buffers (and, on Spark, per-partition "
                    + "serialization streams) before it pushes them all early, so its memory does not grow with the number "
                    + "of partitions. On Spark these buffers are also counted as the task's execution memory and pushed "
                    + "when Spark's memory manager asks for room.")
            .build();

    public static final ConfigEntry<Long> PUSH_MERGED_SIZE = ConfigEntry.builder(
                    "estuary.client.push.mergedSize", ConfigType.BYTES)
            .defaultValue("1m")
            .scope(CLIENT)
            .check(ConfigType.positive())
            .doc("At the end of a map task, the partial buffers bound for one worker are sent together in pushes of "
                    + "up to this size, instead of one push per partition.")
            .build();

    public static final ConfigEntry<Long> PUSH_MAX_BYTES_IN_FLIGHT = ConfigEntry.builder(
                    "estuary.client.push.maxBytesInFlight", ConfigType.BYTES)
            .defaultValue("32m")
            .scope(CLIENT)
            .check(ConfigType.positive())
            .doc("Pushed but not yet acknowledged bytes per map task; a task waits before pushing more.")
            .build();

    public static final ConfigEntry<Integer> PUSH_RETRIES = ConfigEntry.builder(
                    "estuary.client.push.retries", ConfigType.INT)
            .defaultValue("8")
            .scope(CLIENT)
            .check(ConfigType.nonNegative())
            .doc("The retry budget of one push: how often it is sent again after a retryable failure before the map "
                    + "task fails. A busy worker is retried after a back-off; a failed location (worker gone, disk "
                    + "failed, hard split, unknown location) is revived to a new location at once. Fatal failures are "
                    + "never retried.")
            .build();

    public static final ConfigEntry<Long> PUSH_RETRY_WAIT = ConfigEntry.builder(
                    "estuary.client.push.retryWait", ConfigType.DURATION_MS)
            .defaultValue("200ms")
            .scope(CLIENT)
            .doc(
                    "Back-off before the first retry of a push refused as busy; doubled for each further one (at most "
                            + "10 s), each wait drawn at random between half and all of it so that many tasks do not retry in step.")
            .build();

    public static final ConfigEntry<String> COMPRESSION_CODEC = ConfigEntry.builder(
                    "estuary.client.compression.codec", ConfigType.STRING)
            .defaultValue("lz4")
            .scope(CLIENT)
            .check(ConfigType.oneOf("lz4", "zstd", "none"))
            .doc("Compression of pushed batches: lz4, zstd or none. zstd compresses more for more CPU, and needs "
                    + "zstd-jni on the class path (Spark 2.3 and later ship it). Batches that do not shrink are "
                    + "stored as they are. In Spark, when this is not set, spark.shuffle.compress=false means none "
                    + "and spark.io.compression.codec=zstd means zstd, as for Spark's own shuffle.")
            .build();

    public static final ConfigEntry<Integer> COMPRESSION_ZSTD_LEVEL = ConfigEntry.builder(
                    "estuary.client.compression.zstd.level", ConfigType.INT)
            .defaultValue("1")
            .scope(CLIENT)
            .check(l -> l >= -7 && l <= 22 ? null : "must be between -7 and 22")
            .doc("Zstandard level when the codec is zstd: higher compresses more and costs more CPU. In Spark, when "
                    + "this is not set, spark.io.compression.zstd.level.")
            .build();

    public static final ConfigEntry<Integer> FETCH_MAX_CHUNKS_IN_FLIGHT = ConfigEntry.builder(
                    "estuary.client.fetch.maxChunksInFlight", ConfigType.INT)
            .defaultValue("3")
            .scope(CLIENT)
            .check(ConfigType.positive())
            .doc("Chunks a reduce task requests ahead of the one it is reading.")
            .build();

    public static final ConfigEntry<Long> FETCH_INLINE_MAX_BYTES = ConfigEntry.builder(
                    "estuary.client.fetch.inlineMaxBytes", ConfigType.BYTES)
            .defaultValue("64k")
            .scope(CLIENT)
            .check(v -> v >= 0 && v <= 1L << 20 ? null : "must be between 0 and 1m")
            .doc("A partition copy of at most this size comes back with the answer to the reader's open, as one "
                    + "chunk: the reader then waits for one round trip to the worker instead of two. 0: never. At "
                    + "most 1m (a control answer).")
            .build();

    public static final ConfigEntry<Integer> FETCH_OPEN_AHEAD = ConfigEntry.builder(
                    "estuary.client.fetch.openAhead", ConfigType.INT)
            .defaultValue("4")
            .scope(CLIENT)
            .check(ConfigType.nonNegative())
            .doc("Partition copies small enough to come back with their open (estuary.client.fetch.inlineMaxBytes) "
                    + "that a reduce task opens ahead of the one it reads, so that a task reading many small "
                    + "partitions (Spark's coalesced partitions) waits for about one round trip instead of one per "
                    + "partition. Holds at most this many times inlineMaxBytes per task. 0: one at a time.")
            .build();

    public static final ConfigEntry<Long> FETCH_UNREACHABLE_TIMEOUT = ConfigEntry.builder(
                    "estuary.client.fetch.unreachableTimeout", ConfigType.DURATION_MS)
            .defaultValue("15s")
            .scope(CLIENT)
            .check(ConfigType.nonNegative())
            .doc("When no copy of a partition's epoch could be read and some failed only for a reason that may pass "
                    + "(their worker could not be reached, e.g. it is restarting; it was busy; a chunk timed out), a reduce "
                    + "task waits and tries those copies again, each from the chunk where it stopped, 1 s doubling up to "
                    + "5 s between tries (each drawn between half and all of it), for at most this long in a row without "
                    + "receiving a chunk, and within estuary.client.fetch.retriesPerCopy and retriesPerPartition, before "
                    + "declaring the partition lost (the engine reruns its maps). 0 declares it lost at once.")
            .build();

    public static final ConfigEntry<Integer> FETCH_RETRIES_PER_COPY = ConfigEntry.builder(
                    "estuary.client.fetch.retriesPerCopy", ConfigType.INT)
            .defaultValue("3")
            .scope(CLIENT)
            .check(ConfigType.nonNegative())
            .doc("How often a reduce task tries a copy of a partition's epoch again after it failed once its worker "
                    + "had answered (the connection broke, a chunk timed out or was refused as busy), over the whole read "
                    + "and whatever the copy delivered in between; the next failure gives that copy up. Failures to reach "
                    + "the worker at all are bounded by estuary.client.fetch.unreachableTimeout instead, and a stream the "
                    + "worker dropped while the task was busy elsewhere is opened again without counting.")
            .build();

    public static final ConfigEntry<Integer> FETCH_RETRIES_PER_PARTITION = ConfigEntry.builder(
                    "estuary.client.fetch.retriesPerPartition", ConfigType.INT)
            .defaultValue("8")
            .scope(CLIENT)
            .check(ConfigType.nonNegative())
            .doc("How many such retries (see estuary.client.fetch.retriesPerCopy) a reduce task spends on one "
                    + "partition, over all its epochs and copies, before declaring it lost.")
            .build();

    public static final ConfigEntry<Long> APPLICATION_HEARTBEAT_INTERVAL = ConfigEntry.builder(
                    "estuary.client.application.heartbeatInterval", ConfigType.DURATION_MS)
            .defaultValue("30s")
            .scope(CLIENT)
            .check(ConfigType.positive())
            .doc("How often the driver tells the master that the application is alive.")
            .build();

    public static final ConfigEntry<Long> COMMIT_TIMEOUT = ConfigEntry.builder(
                    "estuary.client.commit.timeout", ConfigType.DURATION_MS)
            .defaultValue("300s")
            .scope(CLIENT)
            .check(ConfigType.positive())
            .doc("How long the driver spends committing a shuffle at stage end, over all tries on all workers. A "
                    + "worker that has not confirmed within this time counts as failed for every location it holds: "
                    + "those partitions are read from their replica, or the stage reruns. Reducers asking where their "
                    + "partitions are wait for the commit this long plus estuary.network.rpc.timeout.")
            .build();

    public static final ConfigEntry<Integer> COMMIT_RETRIES = ConfigEntry.builder(
                    "estuary.client.commit.retries", ConfigType.INT)
            .defaultValue("2")
            .scope(CLIENT)
            .check(ConfigType.nonNegative())
            .doc("How often the driver asks a worker again to commit the locations it answered failed for (within "
                    + "estuary.client.commit.timeout). Locations whose writes were still under way when the worker "
                    + "answered (a slow disk, after estuary.worker.commit.maxWait) are waited for again as long as the "
                    + "commit timeout allows, not counted here; nor is a worker that could not be reached at all, asked "
                    + "again as long as estuary.client.commit.unreachableTimeout allows.")
            .build();

    public static final ConfigEntry<Long> COMMIT_UNREACHABLE_TIMEOUT = ConfigEntry.builder(
                    "estuary.client.commit.unreachableTimeout", ConfigType.DURATION_MS)
            .defaultValue("15s")
            .scope(CLIENT)
            .check(ConfigType.nonNegative())
            .doc("How long the driver keeps asking a worker it cannot reach (connection refused or closed: e.g. the "
                    + "worker is restarting) to commit at stage end, counted from the first failure, within "
                    + "estuary.client.commit.timeout. It waits 1 s before asking again, doubling up to 5 s, each wait "
                    + "drawn between half and all of it. A gracefully restarted worker answers for the files it committed "
                    + "before stopping, so covering a restart keeps its copies. A worker that never comes back delays the "
                    + "stage end by this much; 0 gives up on it at once.")
            .build();

    public static final ConfigEntry<Boolean> PUSH_REPLICATE = ConfigEntry.builder(
                    "estuary.client.push.replicate", ConfigType.BOOLEAN)
            .defaultValue("true")
            .scope(CLIENT)
            .doc("Keep two copies of every partition on two workers (another rack when a topology is given): the "
                    + "primary forwards each push to the replica before acknowledging it. A cluster with one worker "
                    + "still works, with one copy and one warning per application.")
            .build();

    public static final ConfigEntry<Long> REVIVE_BATCH_WINDOW = ConfigEntry.builder(
                    "estuary.client.revive.batchWindow", ConfigType.DURATION_MS)
            .defaultValue("20ms")
            .scope(CLIENT)
            .check(ConfigType.positive())
            .doc("Revives (new locations for failed partitions) asked for within this window by the tasks of one "
                    + "executor go to the driver as one request; the driver likewise sends the master one request at a "
                    + "time per shuffle.")
            .build();

    public static final ConfigEntry<Integer> FETCH_FILE_GROUP_CACHE_PARTITIONS = ConfigEntry.builder(
                    "estuary.client.fetch.fileGroupCache.maxPartitions", ConfigType.INT)
            .defaultValue("10000")
            .scope(CLIENT)
            .check(ConfigType.nonNegative())
            .doc("Where a shuffle's partitions were committed is asked of the driver once per executor, for every "
                    + "partition, and kept until the engine's map outputs change (Spark's map output epoch: a lost "
                    + "output or a stage rerun), instead of once per reduce task. Shuffles with more partitions than "
                    + "this are asked per task (each kept answer takes about a hundred bytes per partition). 0: never "
                    + "kept.")
            .build();

    public static final ConfigEntry<Boolean> INTEGRITY_CHECK = ConfigEntry.builder(
                    "estuary.client.integrity.check", ConfigType.BOOLEAN)
            .defaultValue("true")
            .scope(CLIENT)
            .doc("Readers count the batches and records of every partition they read and sum their checksums, and "
                    + "compare with what the winning map attempts reported at their end (a reader of part of the maps, "
                    + "as Spark's adaptive skew split, compares batch counts only). A lost, doubled or altered batch "
                    + "then fails the read (the stage reruns) instead of giving a wrong answer.")
            .build();

    public static final ConfigEntry<Boolean> SLOT_LEASE = ConfigEntry.builder(
                    "estuary.client.slotLease.enabled", ConfigType.BOOLEAN)
            .defaultValue("true")
            .scope(CLIENT)
            .doc("Place shuffles by a slot lease from the master (a placement it chose, valid for "
                    + "estuary.master.slot.leaseDuration) instead of asking it for each shuffle's slots: registering a "
                    + "shuffle then costs only the reservations on its workers, and the placement is recorded with "
                    + "the master afterwards. A master that grants no leases (off, or of the previous release) is "
                    + "asked for each shuffle's slots as before.")
            .build();

    public static final ConfigEntry<Boolean> REGISTER_AT_DECLARATION = ConfigEntry.builder(
                    "estuary.client.register.atDeclaration", ConfigType.BOOLEAN)
            .defaultValue("true")
            .scope(CLIENT)
            .doc("Register each shuffle (slots from the master, reserved on the workers) as soon as the engine "
                    + "declares it (Spark: when the job or query stage that needs it is submitted), in the "
                    + "background, so that its map tasks find the locations ready instead of waiting for them. Off: "
                    + "at the first map task's request. A declared shuffle that never runs holds its reservation "
                    + "until the engine forgets it.")
            .build();

    public static final ConfigEntry<Long> MASTER_WAIT = ConfigEntry.builder(
                    "estuary.client.master.wait", ConfigType.DURATION_MS)
            .defaultValue("30s")
            .scope(CLIENT)
            .check(ConfigType.positive())
            .doc("How long the driver keeps trying to reach a master before the job fails with a clear error.")
            .build();

    static void touch() {}
}
