package io.estuary.client;

import io.estuary.client.read.FileGroupCache;
import io.estuary.client.read.ReaderPort;
import io.estuary.client.read.ShuffleBatchReader;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.LocationTable;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.client.write.ReviveBatcher;
import io.estuary.client.write.WriterPort;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.config.TlsConfig;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.GetReducerFileGroupRequest;
import io.estuary.common.protocol.GetReducerFileGroupResponse;
import io.estuary.common.protocol.MapperEndRequest;
import io.estuary.common.protocol.MapperEndResponse;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.PartitionStats;
import io.estuary.common.protocol.RegisterShuffleRequest;
import io.estuary.common.protocol.RegisterShuffleResponse;
import io.estuary.common.protocol.ReportFetchFailureRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.time.Clock;
import io.estuary.common.util.EstuaryException;
import io.estuary.common.util.NamedThreadFactory;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.rpc.ControlClient;
import io.estuary.network.tls.ClientTls;
import java.io.Closeable;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The executor side of Estuary, one per process and shared by all tasks and shuffles: connections to workers and
 * to the driver, the {@link LocationTable} of each shuffle generation being written, one timer for push retries and
 * one {@link ReviveBatcher}. Nothing here grows with the number of shuffles except the location cache, which
 * engines clear when a shuffle is removed. Engines open writers and readers here ({@link #openWriter},
 * {@link #openReader}); those see the client only through their ports ({@link WriterPort}, {@link ReaderPort}).
 * Thread-safe.
 */
public final class ShuffleClient implements WriterPort, ReaderPort, Closeable {
    private final EstuaryConf conf;
    private final Clock clock;
    private final ClientConnections connections;
    private final ClientTls driverTls; // null: plain
    private final ScheduledExecutorService retryTimer;
    private final ReviveBatcher revives;
    private final Map<String, CompletableFuture<LocationTable>> tables = new ConcurrentHashMap<>();
    private final FileGroupCache fileGroups;
    private final Set<PendingRetry> pendingRetries = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    private final long fileGroupWaitMs;
    private final long registerWaitMs;

    public ShuffleClient(EstuaryConf conf) {
        this(conf, Clock.system());
    }

    /**
     * {@code clock}: where its writers and readers read the time (back-off, fetch wait, write time).
     *
     * @throws io.estuary.common.config.ConfigException when authentication is on and {@code conf} holds no
     *     application secret
     */
    public ShuffleClient(EstuaryConf conf, Clock clock) {
        this.conf = conf;
        this.clock = clock;
        long rpc = conf.get(NetworkConfig.RPC_TIMEOUT);
        // The driver answers where partitions are only once their commit ended, which takes up to the commit timeout;
        // it answers a registration once the master placed the shuffle and its workers reserved it (up to 3 tries,
        // each waiting for the master and for the workers).
        this.fileGroupWaitMs = conf.get(ClientConfig.COMMIT_TIMEOUT) + rpc;
        this.registerWaitMs = 3 * (conf.get(ClientConfig.MASTER_WAIT) + 2 * rpc) + rpc;
        // Workers' push and fetch ports are the data group; the driver's port (driver()) the application group.
        this.connections =
                new ClientConnections(conf, "estuary-client", ClientTls.fromConf(conf, TlsConfig.Group.DATA));
        this.driverTls = ClientTls.fromConf(conf, TlsConfig.Group.APPLICATION);
        this.retryTimer = Executors.newSingleThreadScheduledExecutor(new NamedThreadFactory("estuary-push-retry"));
        this.revives = new ReviveBatcher(retryTimer, conf.get(ClientConfig.REVIVE_BATCH_WINDOW));
        this.fileGroups = new FileGroupCache(conf.get(ClientConfig.FETCH_FILE_GROUP_CACHE_PARTITIONS), 64);
    }

    @Override
    public EstuaryConf conf() {
        return conf;
    }

    @Override
    public Clock clock() {
        return clock;
    }

    /** A writer for one map attempt of an engine without stages (see {@link MapOutputWriter}). */
    public MapOutputWriter openWriter(ShuffleSpec spec, int mapId, int attemptId) {
        return new MapOutputWriter(this, spec, mapId, attemptId);
    }

    /**
     * A writer for one map attempt of attempt {@code stageAttempt} of stage {@code stageId} (see
     * {@link MapOutputWriter#MapOutputWriter(WriterPort, ShuffleSpec, int, int, int, int, boolean)}).
     */
    public MapOutputWriter openWriter(
            ShuffleSpec spec, int mapId, int attemptId, int stageId, int stageAttempt, boolean indeterminate) {
        return new MapOutputWriter(this, spec, mapId, attemptId, stageId, stageAttempt, indeterminate);
    }

    /** A reader of partitions [startPartition, endPartition) written by maps [startMap, endMap). */
    public ShuffleBatchReader openReader(
            ShuffleSpec spec, int startPartition, int endPartition, int startMap, int endMap) {
        return new ShuffleBatchReader(this, spec, startPartition, endPartition, startMap, endMap);
    }

    /**
     * As {@link #openReader(ShuffleSpec, int, int, int, int)}, for a task under the engine's map output epoch
     * {@code engineEpoch} (negative: none): where the partitions are is asked of the driver once per process and
     * epoch ({@link FileGroupCache}).
     */
    public ShuffleBatchReader openReader(
            ShuffleSpec spec, int startPartition, int endPartition, int startMap, int endMap, long engineEpoch) {
        ReaderPort port = engineEpoch < 0 ? this : fileGroups.portFor(this, engineEpoch);
        return new ShuffleBatchReader(port, spec, startPartition, endPartition, startMap, endMap);
    }

    /**
     * Runs {@code retry} after {@code delayMs} on the process's one retry thread, or, if this client closes first (or
     * is closed already), runs {@code dropped} instead, on the closing (or calling) thread: exactly one of the two
     * runs. A retry holds a push's buffer and a task waits for it, so a close may not simply forget it.
     */
    @Override
    public void retryTimerSchedule(Runnable retry, long delayMs, Runnable dropped) {
        PendingRetry p = new PendingRetry(retry, dropped);
        pendingRetries.add(p);
        if (closed) { // close() may have swept the set before p was added
            p.drop();
            return;
        }
        try {
            retryTimer.schedule(p::run, delayMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            p.drop(); // closing
        }
    }

    /** Retries scheduled and not yet run or dropped (for tests). */
    int pendingRetries() {
        return pendingRetries.size();
    }

    /** Revives waiting for the batch window to send them (for tests). */
    int pendingRevives() {
        return revives.pending();
    }

    /** A scheduled retry that either runs or is dropped, once. */
    private final class PendingRetry {
        private final Runnable retry;
        private final Runnable dropped;
        private final AtomicBoolean settled = new AtomicBoolean();

        PendingRetry(Runnable retry, Runnable dropped) {
            this.retry = retry;
            this.dropped = dropped;
        }

        void run() {
            if (!settled.compareAndSet(false, true)) return;
            pendingRetries.remove(this);
            retry.run();
        }

        void drop() {
            if (!settled.compareAndSet(false, true)) return;
            pendingRetries.remove(this);
            dropped.run();
        }
    }

    @Override
    public TransportClient pushClient(String appId, WorkerAddress w) throws RemoteException {
        return connections.of(appId).client(w.getHost(), w.getPushPort());
    }

    @Override
    public TransportClient fetchClient(String appId, WorkerAddress w) throws RemoteException {
        return connections.of(appId).client(w.getHost(), w.getFetchPort());
    }

    private TransportClient driver(ShuffleSpec spec) throws RemoteException {
        return connections.of(spec.appId).client(spec.driverHost, spec.driverPort, driverTls);
    }

    /**
     * The locations a writer of attempt {@code stageAttempt} of stage {@code stageId} writes to; the first caller in
     * this process for that stage attempt asks the driver, which picks the generation (a fresh one after lost data, or
     * for an indeterminate stage's rerun) or refuses a straggler of an attempt older than the newest generation's.
     */
    public LocationTable register(ShuffleSpec spec, int stageAttempt, boolean indeterminate) {
        return register(spec, 0, stageAttempt, indeterminate);
    }

    /** The pause before a shuffle told to wait for admission (ADMISSION_WAIT) asks again. */
    static final long ADMISSION_POLL_MS = 1_000;

    /** {@link #register(ShuffleSpec, int, boolean)} for an engine whose stages have ids (Spark). */
    @Override
    public LocationTable register(ShuffleSpec spec, int stageId, int stageAttempt, boolean indeterminate) {
        String key = spec.shuffleId + "/" + spec.appId + "/" + stageId + "." + stageAttempt;
        CompletableFuture<LocationTable> mine = new CompletableFuture<>();
        CompletableFuture<LocationTable> f = tables.putIfAbsent(key, mine);
        if (f == null) {
            f = mine;
            try {
                Request.Builder ask = Request.newBuilder()
                        .setRegisterShuffle(RegisterShuffleRequest.newBuilder()
                                .setShuffleId(spec.shuffleId)
                                .setNumMappers(spec.numMappers)
                                .setNumPartitions(spec.numPartitions)
                                .setStageId(stageId)
                                .setStageAttempt(stageAttempt)
                                .setIndeterminate(indeterminate));
                RegisterShuffleResponse r;
                // Told to wait for admission under a quota: ask again after a pause, for as long as the driver says
                // so (the master bounds the wait by the quota's policy and then answers QUOTA_EXCEEDED).
                while (true) {
                    try {
                        r = ControlClient.ask(driver(spec), ask, RegisterShuffleResponse.parser(), registerWaitMs);
                        break;
                    } catch (RemoteException e) {
                        if (e.status() != io.estuary.common.status.StatusCode.ADMISSION_WAIT) throw e;
                        Thread.sleep(ADMISSION_POLL_MS);
                    }
                }
                mine.complete(new LocationTable(spec.appId, r.getEstuaryShuffleId(), r.getLocationsList()));
            } catch (RemoteException | RuntimeException | InterruptedException e) {
                if (e instanceof InterruptedException) Thread.currentThread().interrupt();
                tables.remove(key, mine); // the next task tries again
                mine.completeExceptionally(
                        new EstuaryException("registering " + spec + " failed: " + e.getMessage(), e));
            }
        }
        try {
            return f.join();
        } catch (CompletionException e) {
            throw (RuntimeException) e.getCause();
        }
    }

    /** A new location for a partition whose location at {@code failedEpoch} failed or split; batched, see {@link ReviveBatcher}. */
    @Override
    public CompletableFuture<PartitionLocation> revive(
            ShuffleSpec spec,
            LocationTable table,
            int partition,
            int failedEpoch,
            WorkerAddress failedWorker,
            boolean split) {
        return revives.revive(
                table,
                () -> {
                    try {
                        return driver(spec);
                    } catch (RemoteException e) {
                        throw new EstuaryException(
                                "cannot reach the driver at " + spec.driverHost + ":" + spec.driverPort + ": "
                                        + e.getMessage(),
                                e);
                    }
                },
                partition,
                failedEpoch,
                failedWorker,
                split);
    }

    /**
     * Reports a finished map attempt with what it wrote to each partition ({@code table} is null when it wrote
     * nothing); returns the attempt that counts for this map (the first to finish).
     */
    public int mapperEnd(
            ShuffleSpec spec,
            LocationTable table,
            int stageAttempt,
            boolean indeterminate,
            int mapId,
            int attemptId,
            List<PartitionStats> stats)
            throws RemoteException {
        return mapperEnd(spec, table, 0, stageAttempt, indeterminate, mapId, attemptId, stats);
    }

    /** {@link #mapperEnd(ShuffleSpec, LocationTable, int, boolean, int, int, List)} with the stage's id. */
    @Override
    public int mapperEnd(
            ShuffleSpec spec,
            LocationTable table,
            int stageId,
            int stageAttempt,
            boolean indeterminate,
            int mapId,
            int attemptId,
            List<PartitionStats> stats)
            throws RemoteException {
        MapperEndResponse r = ControlClient.ask(
                driver(spec),
                Request.newBuilder()
                        .setMapperEnd(MapperEndRequest.newBuilder()
                                .setShuffleId(table == null ? -1 : table.shuffleId())
                                .setEngineShuffleId(spec.shuffleId)
                                .setStageId(stageId)
                                .setStageAttempt(stageAttempt)
                                .setIndeterminate(indeterminate)
                                .setMapId(mapId)
                                .setAttemptId(attemptId)
                                .setNumMappers(spec.numMappers)
                                .setNumPartitions(spec.numPartitions)
                                .addAllStats(stats)),
                MapperEndResponse.parser());
        return r.getWinningAttemptId();
    }

    /**
     * Where partitions [start, end) of the newest generation were committed, which attempt of each map counts, and
     * what maps [startMap, endMap) wrote to each partition. Waits for the commit, as long as the driver may take to
     * commit ({@code estuary.client.commit.timeout}) and to answer.
     */
    @Override
    public GetReducerFileGroupResponse reducerFiles(
            ShuffleSpec spec, int startPartition, int endPartition, int startMap, int endMap) throws RemoteException {
        return ControlClient.ask(
                driver(spec),
                Request.newBuilder()
                        .setGetReducerFileGroup(GetReducerFileGroupRequest.newBuilder()
                                .setShuffleId(spec.shuffleId)
                                .setStartPartition(startPartition)
                                .setEndPartition(endPartition)
                                .setStartMap(startMap)
                                .setEndMap(endMap)
                                .setNumMappers(spec.numMappers)
                                .setNumPartitions(spec.numPartitions)),
                GetReducerFileGroupResponse.parser(),
                fileGroupWaitMs);
    }

    /** Whole-map file group lookups of readers with an epoch, and how many were served without asking the driver. */
    public long[] fileGroupLookupsAndHits() {
        return fileGroups.lookupsAndHits();
    }

    /** Tells the driver a generation cannot be read, before the engine is told to rerun its maps. */
    public void reportFetchFailure(ShuffleSpec spec, int estuaryShuffleId, String reason) throws RemoteException {
        ControlClient.ask(
                driver(spec),
                Request.newBuilder()
                        .setReportFetchFailure(ReportFetchFailureRequest.newBuilder()
                                .setShuffleId(spec.shuffleId)
                                .setEstuaryShuffleId(estuaryShuffleId)
                                .setReason(reason)),
                Empty.parser());
    }

    /**
     * Drops what this process cached of an engine shuffle. By engine shuffle id alone: an executor does not know the
     * Estuary application id (the driver's lifecycle manager makes it unique per driver) until a task brings it.
     */
    public void forgetShuffle(int shuffleId) {
        String prefix = shuffleId + "/";
        tables.keySet().removeIf(k -> k.startsWith(prefix));
        fileGroups.forget(shuffleId);
    }

    /**
     * Closes the connections. Revives not yet answered fail, and retries not yet run are dropped (their pushes settle
     * as failed and release their buffers), so tasks still writing fail at once instead of waiting out their timeouts.
     */
    @Override
    public void close() {
        closed = true;
        revives.close();
        for (PendingRetry p : pendingRetries.toArray(new PendingRetry[0])) p.drop();
        retryTimer.shutdownNow();
        connections.close();
    }
}
