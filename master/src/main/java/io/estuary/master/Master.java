package io.estuary.master;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.config.TlsConfig;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.WorkerState;
import io.estuary.common.util.GuardedScheduledExecutor;
import io.estuary.common.util.HostNames;
import io.estuary.master.admin.AdministeredMaster;
import io.estuary.master.admin.MasterAdminEndpoint;
import io.estuary.master.admin.MasterMetrics;
import io.estuary.master.protocol.ApplicationRemoved;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.protocol.MasterCommandBatch;
import io.estuary.master.protocol.WorkerLost;
import io.estuary.master.protocol.WorkerStateChanged;
import io.estuary.master.quota.Admission;
import io.estuary.master.quota.QuotaBook;
import io.estuary.master.quota.QuotaUsage;
import io.estuary.master.slots.SlotAllocators;
import io.estuary.master.state.LocalStateLog;
import io.estuary.master.state.MasterNodes;
import io.estuary.master.state.MasterState;
import io.estuary.master.state.RatisStateLog;
import io.estuary.master.state.StateLog;
import io.estuary.master.state.WorkerId;
import io.estuary.network.server.TransportServer;
import io.estuary.network.tls.ServerTls;
import io.estuary.server.auth.ClusterSecret;
import io.estuary.server.auth.ServerSecurity;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master: tracks workers, their disks and slots, hands out partition locations, and expires dead workers and
 * applications. A single master keeps its log locally; with {@code estuary.master.ha.nodes} set, the masters form
 * a Raft group, the leader decides and every master applies the same log.
 */
public final class Master implements AdministeredMaster, Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(Master.class);

    private final StateLog log;
    private final TransportServer server;
    private final ScheduledExecutorService checker;
    private final LivenessTracker workerLiveness;
    private final LivenessTracker appLiveness;
    private MasterRpcHandler handler;
    private final WorkerFailureTracker failures;
    private final String host;
    private final MasterNodes nodes;
    private final String id;
    private final MasterMetrics metrics;
    private final Admission admission;
    private final MasterAdminEndpoint admin;
    private final String version;

    private final io.estuary.common.time.Clock clock;

    public Master(EstuaryConf conf) throws IOException {
        this(conf, () -> {
            LOG.error("Exiting: this master cannot work without its Raft server");
            System.exit(3);
        });
    }

    /** {@code onFatal} runs when the master cannot go on (its Raft server stopped); by default the process exits. */
    public Master(EstuaryConf conf, Runnable onFatal) throws IOException {
        this(conf, onFatal, io.estuary.common.time.Clock.system());
    }

    /**
     * {@code clock}: what liveness (workers', applications'), failure windows and exclusion read, so a test can
     * drive it. Wall-clock milliseconds: these times are compared with ones other masters took after a failover.
     */
    public Master(EstuaryConf conf, Runnable onFatal, io.estuary.common.time.Clock clock) throws IOException {
        this.clock = clock;
        this.version = io.estuary.common.BuildVersion.of(conf);
        this.nodes = MasterNodes.parse(conf.get(MasterConfig.HA_NODES));
        this.id = nodes.isEmpty() ? "" : conf.get(MasterConfig.HA_ID);
        this.metrics = new MasterMetrics(this);
        // A default quota that does not parse stops the master here, naming its key.
        this.admission = new Admission(new QuotaBook(conf), new QuotaUsage());
        // Before anything starts: with authentication on, a master without its cluster secret refuses to start.
        byte[] clusterSecret = ClusterSecret.bytesOf(conf);
        int port;
        if (nodes.isEmpty()) {
            this.host = HostNames.orLocalHost(conf.get(MasterConfig.HOST));
            port = conf.get(MasterConfig.PORT);
            this.log = new LocalStateLog(conf);
        } else {
            MasterNodes.Node self = nodes.get(conf.get(MasterConfig.HA_ID));
            this.host = self.host;
            port = self.rpcPort;
            this.log = new RatisStateLog(conf, nodes, self.id, onFatal);
        }
        this.workerLiveness = new LivenessTracker(conf.get(MasterConfig.WORKER_TIMEOUT));
        this.appLiveness = new LivenessTracker(conf.get(MasterConfig.APPLICATION_TIMEOUT));
        long lateAfterMs = conf.get(MasterConfig.WORKER_TIMEOUT) / 4;
        WorkerFailureTracker failures = this.failures = new WorkerFailureTracker(
                log,
                conf.get(MasterConfig.WORKER_FAILURE_EXCLUDE_THRESHOLD),
                conf.get(MasterConfig.WORKER_FAILURE_WINDOW),
                conf.get(MasterConfig.WORKER_FAILURE_EXCLUDE_GRACE),
                conf.get(MasterConfig.WORKER_FAILURE_MAX_EXCLUDED_FRACTION),
                id -> ownHeartbeatsTroubled(id, lateAfterMs),
                clock::millis);
        ApplicationSecrets secrets = new ApplicationSecrets(log, clusterSecret, ServerSecurity.enforced(conf));
        MasterRpcHandler handler = this.handler = new MasterRpcHandler(
                log,
                SlotAllocators.fromConf(conf),
                workerLiveness,
                appLiveness,
                conf.get(MasterConfig.APPLICATION_TIMEOUT),
                metrics,
                failures,
                io.estuary.network.rpc.RequestLimits.from(conf),
                io.estuary.network.auth.Authorizer.of(conf, "master", metrics::authorizationRefused),
                clock,
                secrets,
                RegistrationRateLimiter.fromConf(conf, clock),
                conf.get(MasterConfig.SLOT_LEASE_DURATION),
                admission);
        log.onLeadershipChange(() -> {
            // A new leader hears from everyone afresh before declaring anything lost.
            workerLiveness.reset();
            appLiveness.reset();
            handler.leadershipChanged();
            failures.leadershipChanged();
        });
        TransportServer rpc = null;
        try {
            ServerTls tls = ServerTls.fromConf(conf, TlsConfig.Group.INTERNAL); // before binding: may fail
            io.estuary.server.tls.JdkServerTls adminTls = io.estuary.server.tls.JdkServerTls.fromConf(
                    conf, TlsConfig.Group.ADMIN, io.estuary.common.time.Clock.system());
            // Admits anonymous connections: a lifecycle manager registers its application's secret on one.
            rpc = new TransportServer(
                    conf,
                    "master",
                    host,
                    port,
                    handler,
                    TransportServer.Options.defaults()
                            .observer(metrics.observer())
                            .clock(clock)
                            .auth(ServerSecurity.serverAuth(conf, clusterSecret, secrets, true))
                            .tls(tls));
            this.admin = new MasterAdminEndpoint(
                    host,
                    conf.get(MasterConfig.HTTP_PORT),
                    this,
                    metrics,
                    io.estuary.server.admin.AdminAuth.fromConf(conf, clock),
                    adminTls);
        } catch (IOException | RuntimeException e) {
            if (rpc != null) rpc.close();
            log.close();
            throw e;
        }
        this.server = rpc;
        if (log instanceof LocalStateLog) ((LocalStateLog) log).setEndpoint(host + ":" + server.port());
        this.checker = new GuardedScheduledExecutor("master-liveness");
        long every = conf.get(MasterConfig.LIVENESS_CHECK_INTERVAL);
        checker.scheduleWithFixedDelay(this::checkLiveness, every, every, TimeUnit.MILLISECONDS);
        LOG.info(
                "Estuary master {}version {} serving on {} (rpc), {}:{} (http)",
                id.isEmpty() ? "" : id + " ",
                version,
                endpoint(),
                host,
                admin.port());
    }

    /** The release this master reports (built, or overridden by estuary.version.override / ESTUARY_VERSION). */
    @Override
    public String version() {
        return version;
    }

    public int port() {
        return server.port();
    }

    @Override
    public StateLog log() {
        return log;
    }

    @Override
    public MasterNodes nodes() {
        return nodes;
    }

    /** This master's id in its HA group ("" for a single master). */
    @Override
    public String id() {
        return id;
    }

    public int httpPort() {
        return admin.port();
    }

    /** This master's Prometheus metrics (what {@code GET /metrics} exports). */
    /** The request handler (tests drive it with identities set on their channels). */
    @Override
    public io.estuary.common.protocol.ApplicationPrincipal principalOf(String app) {
        MasterRpcHandler h = handler;
        return h == null ? AdministeredMaster.super.principalOf(app) : h.principalOf(app);
    }

    MasterRpcHandler rpcHandler() {
        return handler;
    }

    public MasterMetrics metrics() {
        return metrics;
    }

    /**
     * Sets a worker's state (ACTIVE, EXCLUDED or DECOMMISSIONING) through the log; only the leader can. Returns once
     * the change is committed.
     */
    @Override
    public void setWorkerState(String workerId, WorkerState state, String reason) {
        if (!log.isLeader())
            throw new IllegalStateException("only the leader changes worker states; ask " + log.leaderEndpoint());
        WorkerInfo w = log.stateMachine().read(s -> s.worker(workerId));
        if (w == null) throw new IllegalArgumentException("no registered worker " + workerId);
        LOG.info("Worker {} is now {}: {}", workerId, state, reason);
        log.submit(MasterCommand.newBuilder()
                        .setWorkerStateChanged(WorkerStateChanged.newBuilder()
                                .setWorker(w.getAddress())
                                .setState(state)
                                .setReason(reason))
                        .build())
                .join();
    }

    @Override
    public Admission admission() {
        return admission;
    }

    @Override
    public List<String> declaredTags(String workerId) {
        MasterRpcHandler h = handler;
        return h == null || !log.isLeader() ? null : h.declaredTags(workerId);
    }

    /** Hands leadership to master {@code targetId}; only the leader can. */
    @Override
    public void transferLeadership(String targetId) throws IOException {
        if (!(log instanceof RatisStateLog))
            throw new IllegalStateException("a single master has no one to hand over to");
        if (!log.isLeader())
            throw new IllegalStateException("only the leader can hand leadership over; ask " + log.leaderEndpoint());
        nodes.get(targetId);
        ((RatisStateLog) log).transferLeadership(targetId, 10_000);
    }

    @Override
    public boolean isLeader() {
        return log.isLeader();
    }

    @Override
    public String endpoint() {
        return host + ":" + port();
    }

    /** Revive requests (new locations for running shuffles) this master has answered, for tests and metrics. */
    public long reviveSlotRequests() {
        return metrics.reviveSlotRequests();
    }

    /** Read access to the agreed state, for tests and the admin API. */
    @Override
    public <T> T state(java.util.function.Function<MasterState, T> reader) {
        return log.stateMachine().read(reader);
    }

    /**
     * Whether a worker's own heartbeats show trouble: none for a quarter of the worker timeout (a few missed beats),
     * or its latest report has a disk that is not healthy.
     */
    private boolean ownHeartbeatsTroubled(String workerId, long lateAfterMs) {
        Long last = workerLiveness.lastSeen(workerId);
        // Nothing tracked (a new leader not yet heard from it) is no evidence either way.
        if (last != null && clock.millis() - last > lateAfterMs) return true;
        WorkerInfo report = handler == null ? null : handler.latestReport(workerId);
        if (report == null) return false;
        for (io.estuary.common.protocol.DiskInfo d : report.getDisksList()) {
            if (d.getStatus() != io.estuary.common.protocol.DiskStatus.DISK_HEALTHY) return true;
        }
        return false;
    }

    void checkLiveness() {
        if (!log.isLeader()) return; // only the leader decides what is lost
        try {
            long now = clock.millis();
            List<MasterCommand> changes = new ArrayList<>();
            Map<String, WorkerInfo> workers = new HashMap<>();
            for (WorkerInfo w : log.stateMachine().read(MasterState::workers))
                workers.put(WorkerId.of(w.getAddress()), w);
            for (String id : workerLiveness.expired(workers.keySet(), now)) {
                workerLiveness.forget(id);
                WorkerInfo w = workers.get(id);
                if (w == null) continue;
                LOG.warn("Worker {} sent no heartbeat in time: declared lost", id);
                handler.workerLost(id);
                changes.add(MasterCommand.newBuilder()
                        .setWorkerLost(WorkerLost.newBuilder().setWorker(w.getAddress()))
                        .build());
            }
            List<String> apps = new ArrayList<>(log.stateMachine().read(MasterState::applicationIds));
            for (String app : appLiveness.expired(apps, now)) {
                appLiveness.forget(app);
                handler.applicationExpired(app);
                if (!apps.contains(app)) continue;
                LOG.warn("Application {} sent no heartbeat in time: expired, its data will be deleted", app);
                changes.add(MasterCommand.newBuilder()
                        .setApplicationRemoved(ApplicationRemoved.newBuilder().setAppId(app))
                        .build());
            }
            changes.addAll(failures.readmissions());
            handler.pruneUnknownShuffles(now);
            changes.addAll(handler.enforceQuotas());
            // Everything one check found goes into the log as one entry.
            if (changes.size() == 1) log.submit(changes.get(0));
            else if (changes.size() > 1) {
                log.submit(MasterCommand.newBuilder()
                        .setBatch(MasterCommandBatch.newBuilder().addAllCommands(changes))
                        .build());
            }
        } catch (RuntimeException e) {
            LOG.warn("Liveness check failed", e);
        }
    }

    /** Stops this master; a leader first hands leadership to another master, so nobody waits for an election. */
    @Override
    public void close() {
        if (log instanceof RatisStateLog && log.isLeader()) {
            for (MasterNodes.Node n : nodes.all()) {
                if (n.id.equals(id)) continue;
                try {
                    ((RatisStateLog) log).transferLeadership(n.id, 5_000);
                    LOG.info("Handed leadership to {} before stopping", n.id);
                    break;
                } catch (IOException | RuntimeException e) {
                    LOG.warn("Handing leadership to {} failed: {}", n.id, e.getMessage());
                }
            }
        }
        shutDown();
    }

    /** Stops at once, as a crash would: no leadership hand-over. */
    public void halt() {
        shutDown();
    }

    private void shutDown() {
        admin.close();
        checker.shutdownNow();
        server.close();
        log.close();
    }

    public static void main(String[] args) throws Exception {
        EstuaryConf conf = EstuaryConf.forServer();
        if (conf.get(io.estuary.common.config.NetworkConfig.HALT_ON_FATAL_ERROR)) {
            io.estuary.common.util.FatalErrors.haltOnFatalError();
        }
        Master master = new Master(conf);
        LOG.info("Estuary master started on {}", master.endpoint());
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            LOG.info("Estuary master stopping");
                            master.close();
                            stopped.countDown();
                        },
                        "master-shutdown"));
        stopped.await();
    }
}
