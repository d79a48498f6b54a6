package io.estuary.worker;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.ConfigException;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.config.TlsConfig;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.WorkerState;
import io.estuary.common.util.HostNames;
import io.estuary.common.util.NamedThreadFactory;
import io.estuary.network.auth.Credentials;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.MasterClient;
import io.estuary.network.server.TransportServer;
import io.estuary.network.tls.ClientTls;
import io.estuary.network.tls.ServerTls;
import io.estuary.server.auth.ClusterSecret;
import io.estuary.server.auth.ServerSecurity;
import io.estuary.worker.admin.WorkerAdmin;
import io.estuary.worker.auth.ApplicationSecretCache;
import io.estuary.worker.auth.MasterSecretSource;
import io.estuary.worker.fetch.CacheFiller;
import io.estuary.worker.fetch.FetchHandler;
import io.estuary.worker.lifecycle.Decommission;
import io.estuary.worker.lifecycle.GracefulShutdown;
import io.estuary.worker.lifecycle.PushGate;
import io.estuary.worker.meta.CommittedFileRecorder;
import io.estuary.worker.meta.CommittedFileStore;
import io.estuary.worker.meta.WorkerRecovery;
import io.estuary.worker.partition.PartitionRegistry;
import io.estuary.worker.push.PushHandler;
import io.estuary.worker.push.Replicator;
import io.estuary.worker.storage.StorageManager;
import java.io.Closeable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker: three servers (control, push, fetch) over one set of disks. Pushes merge per partition in memory and
 * are flushed by per-disk threads; commits close the files; fetches stream them back in chunks.
 *
 * <p>Committed files are recorded in a metadata store; a worker started again on the same host, ports and disks
 * serves them again and keeps files it has no record of until the master says their shuffle expired (see
 * {@link WorkerRecovery}). {@link #stopGracefully()} (SIGTERM) moves writers elsewhere and commits what it holds
 * before it exits (see {@link GracefulShutdown}); {@link #decommission()} drains the worker first.
 */
public final class Worker implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);

    private final StorageManager storage;
    private final PartitionRegistry registry;
    private final TransportServer rpcServer;
    private final TransportServer pushServer;
    private final TransportServer fetchServer;
    private final FetchHandler fetchHandler;
    private final Replicator replicator;
    private final io.estuary.worker.push.CongestionControl congestion;
    private final TransportClientFactory masterClients;
    /** Applications' secrets (null with authentication off), and the threads that ask the master for them. */
    private final ApplicationSecretCache secrets;

    private final ExecutorService secretAsks;
    private final MasterHeartbeater heartbeater;
    private final WorkerAddress address;
    private final CommittedFileStore metaStore;
    private final PushGate gate;
    private final GracefulShutdown gracefulShutdown;
    private final Decommission decommission;
    private final long shutdownTimeoutMs;
    private final AtomicReference<WorkerState> state = new AtomicReference<>(WorkerState.WORKER_ACTIVE);
    private final Object stopLock = new Object();
    private boolean stopped;
    private final WorkerAdmin admin;
    private final String version;

    public Worker(EstuaryConf conf) {
        this(conf, io.estuary.common.time.Clock.system());
    }

    /**
     * {@code clock}: what every time-based part reads (idle streams, congestion windows, buffered data's age, stall
     * detection, the decommission timeout), so a test can drive it.
     */
    public Worker(EstuaryConf conf, io.estuary.common.time.Clock clock) {
        this.version = io.estuary.common.BuildVersion.of(conf);
        String host = HostNames.orLocalHost(conf.get(WorkerConfig.HOST));
        long maxFrame = conf.get(NetworkConfig.MAX_FRAME_SIZE);
        if (conf.get(WorkerConfig.CHUNK_SIZE) + 1024 > maxFrame) {
            // A chunk is at most chunkSize, or one push alone (which already fit in a frame), and goes out as one
            // frame.
            throw new ConfigException(WorkerConfig.CHUNK_SIZE.key() + " (" + conf.get(WorkerConfig.CHUNK_SIZE)
                    + ") must stay below " + NetworkConfig.MAX_FRAME_SIZE.key() + " (" + maxFrame + ")");
        }
        // TLS files are read first: files that cannot be used fail the start before anything is opened.
        ServerTls internalTls = ServerTls.fromConf(conf, TlsConfig.Group.INTERNAL);
        ServerTls dataTls = ServerTls.fromConf(conf, TlsConfig.Group.DATA);
        ClientTls internalClientTls = ClientTls.fromConf(conf, TlsConfig.Group.INTERNAL);
        this.storage = new StorageManager(conf, clock);
        this.registry = new PartitionRegistry(storage);
        this.shutdownTimeoutMs = conf.get(WorkerConfig.SHUTDOWN_TIMEOUT);
        this.gate = new PushGate(clock);
        try {
            this.metaStore =
                    CommittedFileStore.open(conf, storage.disks().get(0).dir());
            new WorkerRecovery(metaStore, storage, registry).run();
        } catch (RuntimeException e) {
            storage.close();
            throw e;
        }
        if (storage.cache().enabled()) {
            registry.setListener(PartitionRegistry.Listener.all(
                    new CommittedFileRecorder(metaStore), new CacheFiller(storage.cache(), registry)));
        } else {
            registry.setListener(new CommittedFileRecorder(metaStore));
        }
        io.estuary.network.rpc.RequestLimits limits = io.estuary.network.rpc.RequestLimits.from(conf);
        // With authentication on: a worker without the cluster secret refuses to start; it proves it to the masters
        // and to other workers, and learns applications' secrets from the master.
        byte[] clusterSecret;
        try {
            clusterSecret = ClusterSecret.bytesOf(conf);
        } catch (RuntimeException e) {
            storage.close();
            metaStore.close();
            throw e;
        }
        Credentials credentials = ServerSecurity.clusterCredentials(clusterSecret);
        this.masterClients =
                new TransportClientFactory(conf, "worker-master-client", credentials).withTls(internalClientTls);
        MasterClient masterClient = new MasterClient(masterClients, conf.get(MasterConfig.ENDPOINTS), clock);
        this.secretAsks = clusterSecret == null
                ? null
                : Executors.newFixedThreadPool(2, new NamedThreadFactory("worker-secret-fetch"));
        this.secrets = clusterSecret == null
                ? null
                : new ApplicationSecretCache(
                        clusterSecret,
                        conf.get(AuthConfig.WORKER_SECRET_CACHE_SIZE),
                        new MasterSecretSource(masterClient, conf.get(NetworkConfig.RPC_TIMEOUT)),
                        secretAsks);
        this.fetchHandler = new FetchHandler(
                registry,
                storage.cache(),
                limits,
                conf.get(WorkerConfig.MAX_STREAMS_PER_CONNECTION),
                conf.get(WorkerConfig.STREAM_TIMEOUT),
                clock,
                authorizer(conf, "worker-fetch"));
        long softSplit = conf.get(WorkerConfig.SPLIT_SOFT_SIZE);
        long hardSplit = conf.get(WorkerConfig.SPLIT_HARD_SIZE);
        if (hardSplit < softSplit) {
            throw new ConfigException(WorkerConfig.SPLIT_HARD_SIZE.key() + " (" + hardSplit + ") must be at least "
                    + WorkerConfig.SPLIT_SOFT_SIZE.key() + " (" + softSplit + ")");
        }
        this.admin = new WorkerAdmin(
                conf, version, storage, () -> registry.shuffleKeys().size(), fetchHandler::openStreams, clock);
        fetchHandler.onInlineSent(admin.metrics()::inlineChunkSent);
        this.replicator = new Replicator(
                new TransportClientFactory(conf, "worker-replicate", credentials).withTls(internalClientTls),
                admin.metrics()::replicated);
        this.congestion = new io.estuary.worker.push.CongestionControl(conf, storage.memory(), clock);
        // Only servers and applications with a registered secret connect: no anonymous peer.
        TransportServer.Options options = TransportServer.Options.defaults()
                .clock(clock)
                .auth(ServerSecurity.serverAuth(conf, clusterSecret, secrets, false));
        WorkerServers servers = null;
        try {
            servers = new WorkerServers(
                    conf,
                    host,
                    options,
                    admin,
                    internalTls,
                    dataTls,
                    new WorkerControlHandler(
                            registry,
                            gate,
                            congestion,
                            limits,
                            conf.get(WorkerConfig.COMMIT_MAX_WAIT),
                            authorizer(conf, "worker-rpc"),
                            secrets),
                    new PushHandler(
                            registry,
                            storage.memory(),
                            replicator,
                            congestion,
                            softSplit,
                            hardSplit,
                            gate,
                            new io.estuary.network.server.RpcHandler.FrameLimit(
                                    Math.min(
                                            conf.get(WorkerConfig.PUSH_MAX_UNFINISHED),
                                            storage.memory().limit() / 4),
                                    WorkerConfig.PUSH_MAX_UNFINISHED.key()),
                            authorizer(conf, "worker-push")),
                    fetchHandler);
            admin.start(
                    host,
                    conf.get(WorkerConfig.HTTP_PORT),
                    this::address,
                    this::statusText,
                    this::decommission,
                    servers.rpc,
                    servers.push,
                    servers.fetch);
        } catch (RuntimeException e) {
            admin.close();
            if (servers != null) servers.close();
            fetchHandler.close();
            replicator.close();
            congestion.close();
            masterClients.close();
            if (secretAsks != null) secretAsks.shutdownNow();
            storage.close();
            metaStore.close();
            throw e;
        }
        this.rpcServer = servers.rpc;
        this.pushServer = servers.push;
        this.fetchServer = servers.fetch;
        this.address = WorkerAddress.newBuilder()
                .setHost(host)
                .setRpcPort(rpcServer.port())
                .setPushPort(pushServer.port())
                .setFetchPort(fetchServer.port())
                .build();
        long heartbeatMs = conf.get(WorkerConfig.HEARTBEAT_INTERVAL);
        ApplicationSecretCache cache = secrets;
        this.heartbeater = new MasterHeartbeater(
                        masterClient, this::info, registry, heartbeatMs, state::get, this::decommission, app -> {
                            if (cache != null) cache.forget(app);
                        })
                .withTags(conf.get(WorkerConfig.TAGS))
                .withPushRates(congestion::pushRates);
        this.decommission = new Decommission(
                registry::shuffleKeys,
                () -> heartbeater.beatNow(heartbeatMs),
                conf.get(WorkerConfig.DECOMMISSION_TIMEOUT),
                Math.min(heartbeatMs, 1_000),
                clock);
        this.gracefulShutdown = new GracefulShutdown(gate, registry, heartbeater::beatNow, clock);
        storage.checker().onTransition(heartbeater::beatNow); // a disk's new state reaches the master at once
        heartbeater.start();
        LOG.info(
                "Estuary worker version {} serving on {}:{} (rpc), {} (push), {} (fetch), {} (http)",
                version,
                host,
                address.getRpcPort(),
                address.getPushPort(),
                address.getFetchPort(),
                admin.httpPort());
    }

    /** The secrets of applications this worker knows (null with authentication off). */
    public ApplicationSecretCache secrets() {
        return secrets;
    }

    public WorkerAddress address() {
        return address;
    }

    public WorkerInfo info() {
        return WorkerInfo.newBuilder()
                .setAddress(address)
                .addAllDisks(storage.diskInfos())
                .setVersion(version)
                .build();
    }

    /** The release this worker reports (built, or overridden by estuary.version.override / ESTUARY_VERSION). */
    public String version() {
        return version;
    }

    /**
     * Authorization for one of the worker's servers, its refusals counted in the worker's metrics (read when a refusal
     * happens: the fetch handler is made before the metrics).
     */
    private io.estuary.network.auth.Authorizer authorizer(EstuaryConf conf, String server) {
        return io.estuary.network.auth.Authorizer.of(
                conf, server, (request, status) -> admin.metrics().authorizationRefused(request, status));
    }

    /** What /api/status reports as the worker's state: REGISTERING until the master knows it, then its state. */
    private String statusText() {
        if (heartbeater == null || !heartbeater.registered()) return "REGISTERING";
        return state().name().replace("WORKER_", "");
    }

    /** Port of the HTTP endpoint (/metrics, /api/status, /health). */
    public int httpPort() {
        return admin.httpPort();
    }

    /** Streams readers hold open on this worker now. */
    public int openFetchStreams() {
        return fetchHandler.openStreams();
    }

    public WorkerAdmin admin() {
        return admin;
    }

    public boolean registeredWithMaster() {
        return heartbeater.registered();
    }

    /** Heartbeats and registrations the master has answered so far. */
    public long heartbeatsAnswered() {
        return heartbeater.answered();
    }

    public PartitionRegistry registry() {
        return registry;
    }

    /** The worker's disks, memory tracker and small-partition cache. */
    public StorageManager storage() {
        return storage;
    }

    public long bufferedBytes() {
        return storage.memory().held();
    }

    /** What this worker is doing: ACTIVE, DECOMMISSIONING or SHUTTING_DOWN. */
    public WorkerState state() {
        return state.get();
    }

    /**
     * Starts draining (or joins the drain under way): the master is told, places nothing here, and the future
     * completes once no shuffle is held here any more (true) or at {@code estuary.worker.decommission.timeout}
     * (false). The caller then stops the worker ({@link #stopGracefully()}; {@link #main} exits the process).
     */
    public CompletableFuture<Boolean> decommission() {
        state.compareAndSet(WorkerState.WORKER_ACTIVE, WorkerState.WORKER_DECOMMISSIONING);
        if (state.get() != WorkerState.WORKER_DECOMMISSIONING)
            return CompletableFuture.completedFuture(false); // stopping
        return decommission.start();
    }

    /**
     * Stops gracefully within {@code estuary.worker.shutdown.timeout}: refuses new pushes and slots, tells the master,
     * commits and records every open location (see {@link GracefulShutdown}), then closes. Idempotent.
     */
    public GracefulShutdown.Result stopGracefully() {
        GracefulShutdown.Result r;
        synchronized (stopLock) {
            if (stopped) return null;
            state.set(WorkerState.WORKER_SHUTTING_DOWN);
            r = gracefulShutdown.run(shutdownTimeoutMs);
        }
        close();
        return r;
    }

    /** Closes at once: open locations are left uncommitted (as after a crash, but the process lives on). */
    @Override
    public void close() {
        synchronized (stopLock) {
            if (stopped) return;
            stopped = true;
        }
        gate.close();
        decommission.close();
        admin.close();
        heartbeater.close();
        if (secretAsks != null) secretAsks.shutdownNow();
        masterClients.close();
        rpcServer.close();
        pushServer.close();
        replicator.close();
        congestion.close();
        fetchServer.close();
        fetchHandler.close();
        registry.close(); // nothing pushes any more: free the buffers of partitions left uncommitted
        storage.close();
        metaStore.close();
    }

    /** Completes once a decommission has drained the worker. */
    CompletableFuture<Boolean> drained() {
        return decommission.drained();
    }

    public static void main(String[] args) throws Exception {
        WorkerMain.run();
    }
}
