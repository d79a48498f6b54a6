package io.estuary.worker.storage;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.common.util.EstuaryException;
import io.estuary.common.util.ShuffleKey;
import java.io.File;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The worker's disks and where partition files go on them: {@code <dir>/<appId>/<shuffleId>/<partition>-<epoch>}. */
public final class StorageManager {
    private final Map<String, Disk> disks = new LinkedHashMap<>();
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(StorageManager.class);

    private final MemoryTracker memory;
    private final BufferedDataFlusher bufferedData;
    private final long flushThreshold;
    private final long chunkSize;
    private final long mapIndexGranularity;
    private final DiskChecker checker;
    private final PartitionCache cache;
    private final boolean replicaHold;
    private final boolean primaryHold;
    private final CacheShrinker cacheShrinker;
    /** {@code estuary.worker.flush.directIo}: none, replicas or all. */
    private final String directIo;

    private final io.estuary.common.time.Clock clock;

    public StorageManager(EstuaryConf conf) {
        this(conf, io.estuary.common.time.Clock.system());
    }

    /** {@code clock} dates buffered data for the age limit ({@link WorkerConfig#FLUSH_MAX_AGE}). */
    public StorageManager(EstuaryConf conf, io.estuary.common.time.Clock clock) {
        this.clock = clock;
        long configured = conf.get(WorkerConfig.MAX_BUFFERED_BYTES);
        long limit =
                MemoryTracker.effectiveLimit(configured, io.netty.util.internal.PlatformDependent.maxDirectMemory());
        if (limit < configured) {
            LOG.warn(
                    "{} is {} but the JVM allows {} bytes of direct memory: holding at most {}",
                    WorkerConfig.MAX_BUFFERED_BYTES.key(),
                    configured,
                    io.netty.util.internal.PlatformDependent.maxDirectMemory(),
                    limit);
        }
        try {
            this.memory = new MemoryTracker(
                    limit,
                    conf.get(WorkerConfig.MEMORY_RESUME),
                    conf.get(WorkerConfig.MEMORY_PAUSE_PUSH),
                    conf.get(WorkerConfig.MEMORY_PAUSE_REPLICATE),
                    JvmDirectMemory.INSTANCE);
        } catch (IllegalArgumentException e) {
            throw new io.estuary.common.config.ConfigException(
                    WorkerConfig.MEMORY_RESUME.key() + ", " + WorkerConfig.MEMORY_PAUSE_PUSH.key() + ", "
                            + WorkerConfig.MEMORY_PAUSE_REPLICATE.key() + ": " + e.getMessage());
        }
        this.cache = new PartitionCache(
                memory,
                conf.get(WorkerConfig.CACHE_ENABLED),
                conf.get(WorkerConfig.CACHE_MAX_BYTES),
                conf.get(WorkerConfig.CACHE_MAX_PARTITION_SIZE));
        this.cacheShrinker = new CacheShrinker(cache, memory);
        memory.addListener(cacheShrinker);
        this.replicaHold = conf.get(WorkerConfig.REPLICA_HOLD_IN_MEMORY);
        this.primaryHold = conf.get(WorkerConfig.COMMIT_FROM_MEMORY);
        this.bufferedData = new BufferedDataFlusher(memory, conf.get(WorkerConfig.FLUSH_MAX_AGE), clock);
        this.flushThreshold = conf.get(WorkerConfig.FLUSH_BUFFER_SIZE);
        this.chunkSize = conf.get(WorkerConfig.CHUNK_SIZE);
        this.mapIndexGranularity = conf.get(WorkerConfig.MAP_INDEX_GRANULARITY);
        int threads = conf.get(WorkerConfig.FLUSH_THREADS_PER_DISK);
        int readThreads = conf.get(WorkerConfig.FETCH_THREADS_PER_DISK);
        long reserve = conf.get(WorkerConfig.DISK_RESERVE);
        this.directIo = conf.get(WorkerConfig.FLUSH_DIRECT_IO).toLowerCase(java.util.Locale.ROOT);
        for (String d : conf.get(WorkerConfig.STORAGE_DIRS)) {
            File dir = new File(d).getAbsoluteFile();
            if (!dir.isDirectory() && !dir.mkdirs()) {
                throw new EstuaryException(WorkerConfig.STORAGE_DIRS.key() + ": cannot create directory " + dir);
            }
            Disk disk = new Disk(dir, threads, readThreads);
            disk.onFailure(() -> releaseFailed(disk));
            if (!directIo.equals("none")) disk.directAlignment(DirectWrites.alignment(dir));
            disks.put(disk.mountPoint(), disk);
        }
        DiskProbe probe = new DiskProbe(reserve, conf.get(WorkerConfig.DISK_SLOW_THRESHOLD), clock);
        this.checker = new DiskChecker(
                new ArrayList<>(disks.values()),
                d -> probe.probe(d.dir()),
                conf.get(WorkerConfig.DISK_CHECK_INTERVAL),
                conf.get(WorkerConfig.DISK_CHECK_TIMEOUT));
        checker.start();
    }

    /**
     * A disk failed or hangs: what waits for it is given up, so that its memory is released (a hung disk must not
     * keep the whole worker paused) and its partitions' commits fail at once; writers then move those partitions
     * elsewhere (pushes get DISK_FAILED, the client revives them), and the other disks serve on.
     */
    private void releaseFailed(Disk disk) {
        String why = disk.failure() != null ? disk.failure() : "failed";
        int writes = disk.flusher().abandonAll(why);
        int partitions = bufferedData.diskFailed(disk, why);
        LOG.warn(
                "Disk {} failed: gave up {} queued writes and the buffers of {} partitions ({} bytes still held)",
                disk.mountPoint(),
                writes,
                partitions,
                memory.held());
    }

    /** Probes the disks; the worker listens to it to report a disk's change of state at once. */
    public DiskChecker checker() {
        return checker;
    }

    public MemoryTracker memory() {
        return memory;
    }

    /** Small committed partitions held in memory (counted in {@link #memory()}). */
    public PartitionCache cache() {
        return cache;
    }

    /** Where replica copies are held at commit ({@code estuary.worker.replica.holdInMemory}), or null. */
    public PartitionCache replicaHold() {
        return replicaHold && cache.enabled() ? cache : null;
    }

    /**
     * Where the primary copies of replicated partitions are held from their commit until written
     * ({@code estuary.worker.commit.fromMemory}), or null.
     */
    public PartitionCache primaryHold() {
        return primaryHold && cache.enabled() ? cache : null;
    }

    /**
     * The alignment {@code writer} is to write in with {@code O_DIRECT}, for a primary or a {@code replica} copy
     * ({@code estuary.worker.flush.directIo}), or 0: through the page cache.
     */
    public int directAlignment(PartitionFileWriter writer, boolean replica) {
        boolean direct = directIo.equals("all") || (replica && directIo.equals("replicas"));
        return direct ? writer.disk().directAlignment() : 0;
    }

    /** The disk of a storage directory, or null if this worker has no such directory. */
    public Disk disk(String mountPoint) {
        return disks.get(mountPoint);
    }

    /** Every storage directory, in configuration order. */
    public List<Disk> disks() {
        return new ArrayList<>(disks.values());
    }

    public List<DiskInfo> diskInfos() {
        List<DiskInfo> out = new ArrayList<>();
        for (Disk d : disks.values()) out.add(d.info());
        return out;
    }

    /**
     * A writer for a reserved slot on the named disk (any writable disk if that one is unknown here, or failed or full
     * since the master placed the slot).
     */
    public PartitionFileWriter newWriter(String appId, int shuffleId, int partitionId, int epoch, String mountPoint) {
        Disk disk = disks.get(mountPoint);
        if (disk == null || !disk.writable()) disk = anyHealthyDisk();
        File file = new File(shuffleDir(disk, appId, shuffleId), partitionId + "-" + epoch + ".data");
        String name = ShuffleKey.of(appId, shuffleId) + " partition " + partitionId + " epoch " + epoch;
        PartitionFileWriter w = new PartitionFileWriter(
                name, file, disk, memory, flushThreshold, chunkSize, mapIndexGranularity, clock);
        bufferedData.track(w);
        return w;
    }

    private Disk anyHealthyDisk() {
        for (Disk d : disks.values()) if (d.writable()) return d;
        throw new StatusException(
                StatusCode.DISK_FAILED, "no disk on this worker can take data (every one is failed " + "or full)");
    }

    private static File shuffleDir(Disk disk, String appId, int shuffleId) {
        return new File(new File(disk.dir(), safe(appId)), Integer.toString(shuffleId));
    }

    private static String safe(String appId) {
        return appId.replace('/', '_').replace('\\', '_').replace("..", "__");
    }

    /**
     * Deletes every file of a shuffle on every disk, and the application's directory once it is empty. Returns at
     * once: each disk deletes on its own cleaner thread, so a hung disk holds up only its own deletions.
     */
    public void deleteShuffle(String appId, int shuffleId) {
        for (Disk d : disks.values()) {
            d.deleteLater(() -> {
                deleteTree(shuffleDir(d, appId, shuffleId).toPath());
                File appDir = new File(d.dir(), safe(appId));
                String[] left = appDir.list();
                if (left != null && left.length == 0) appDir.delete();
            });
        }
    }

    static void deleteTree(Path root) {
        try {
            DiskHangInjection.await(root.toFile());
        } catch (java.io.InterruptedIOException e) {
            return; // the worker is stopping
        }
        if (!Files.exists(root)) return;
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<Path>() {
                @Override
                public FileVisitResult visitFile(Path f, BasicFileAttributes a) throws IOException {
                    Files.deleteIfExists(f);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                    Files.deleteIfExists(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            // left for the next expiry round
        }
    }

    public BufferedDataFlusher bufferedData() {
        return bufferedData;
    }

    public void close() {
        bufferedData.close();
        checker.close();
        for (Disk d : disks.values()) d.close();
        cacheShrinker.close();
        cache.close();
    }
}
