package io.estuary.client.lifecycle;

import io.estuary.client.batch.BatchCodec;
import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.config.TlsConfig;
import io.estuary.common.protocol.ApplicationPrincipal;
import io.estuary.common.protocol.PartitionFiles;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.tags.TagExpression;
import io.estuary.common.time.Clock;
import io.estuary.common.util.EstuaryException;
import io.estuary.common.util.NamedThreadFactory;
import io.estuary.network.auth.Credentials;
import io.estuary.network.auth.Identity;
import io.estuary.network.auth.SecretLookup;
import io.estuary.network.auth.ServerAuth;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.MasterClient;
import io.estuary.network.rpc.RequestIds;
import io.estuary.network.server.TransportServer;
import io.estuary.network.tls.ClientTls;
import io.estuary.network.tls.ServerTls;
import java.io.Closeable;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver side of Estuary, one per application: registers shuffles (slots from the master, reserved on the
 * workers; when the engine declares them, or at their first writer), gives failed or split partitions new epochs, learns which map attempts ended and what they wrote,
 * commits each shuffle on its workers once every map has ended, and tells reducers where their partitions are.
 * Engine shuffles map to generations ({@link ShuffleGenerations}): a rerun after lost data writes a fresh one. Its
 * threads are shared by all shuffles.
 *
 * <p>Each manager is its own Estuary application: its id is the engine's application id plus a suffix drawn when
 * it starts ({@link #appId()}). A driver the cluster manager starts again under the same engine id (a YARN attempt,
 * a restarted pod) so never meets its predecessor's shuffle ids on the master or the workers, whose data expires
 * as any dead application's. Thread-safe.
 */
public final class LifecycleManager implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(LifecycleManager.class);

    private final String appId;
    private final Clock clock;

    private final TransportClientFactory connections;
    private final MasterClient master;
    private final long masterWaitMs;
    private final TransportServer server;
    private final String host;
    /** The application's secret (null with authentication off), proved on every connection it opens or accepts. */
    private final byte[] secret;

    /** Secret, heartbeats, failure reports and unregistrations: what the master hears of the application. */
    private final ApplicationAtMaster atMaster;
    /** Registrations, loss and failure reports, unregistrations: calls to the master, never a commit or a revive. */
    private final ExecutorService work = Executors.newFixedThreadPool(8, new NamedThreadFactory("estuary-lifecycle"));
    /**
     * Commits, one thread each while it runs: a commit may wait for a worker up to the commit timeout, and must hold
     * up neither registrations and revives nor the commits of other shuffles. Few stages end at once.
     */
    private final ExecutorService commits = Executors.newCachedThreadPool(new NamedThreadFactory("estuary-commit"));
    /**
     * Revive drains, one thread per shuffle being revived: without a master quorum the work pool's threads may each
     * wait up to the master wait (reports, unregistrations, new registrations), and revives must not queue behind them.
     */
    private final ExecutorService revives = Executors.newCachedThreadPool(new NamedThreadFactory("estuary-revive"));
    /**
     * Registrations of shuffles the engine declared, one at a time in declaration order: Spark declares every shuffle
     * of a job when the job is submitted, and those of later stages must not hold up the work pool (a writer takes
     * its own shuffle's registration over, see {@link ShuffleRegistrar#register}).
     */
    private final ExecutorService declarations =
            Executors.newSingleThreadExecutor(new NamedThreadFactory("estuary-declared"));

    private final AtomicLong commitsFinished = new AtomicLong();
    private final ShuffleGenerations generations = new ShuffleGenerations();
    private final FailedWorkers failedWorkers;
    private final ShuffleRegistrar registrar;
    private final ShuffleCommitter committer;
    private final EpochAllocator epochs;
    private final boolean registerAtDeclaration;
    private final QuotaNotices quotas;
    private volatile IntConsumer shuffleLostListener = id -> {};

    /**
     * Registers the application with a master (failing with a clear message when none answers within
     * {@code estuary.client.master.wait}) and starts listening for executors on {@code host}.
     *
     * @param engineAppId the engine's application (attempt) id; the Estuary application id adds a suffix to it
     */
    public LifecycleManager(String engineAppId, EstuaryConf conf, String host) {
        this(engineAppId, conf, host, Clock.system());
    }

    /** {@code clock}: where the manager reads the time (commit deadlines, failed workers, master outages). */
    public LifecycleManager(String engineAppId, EstuaryConf conf, String host, Clock clock) {
        this.clock = clock;
        this.appId = engineAppId + "-" + instanceSuffix();
        this.host = host;
        if (conf.get(AuthConfig.ENABLED)) {
            byte[] given = AuthConfig.applicationSecret(conf);
            this.secret = given != null ? given : SecretRegistration.newSecret();
        } else {
            this.secret = null;
        }
        // Read first: a codec this JVM cannot run and TLS files that cannot be used fail the start before any thread
        // or connection exists (not in every task).
        BatchCodec.codecId(conf.get(ClientConfig.COMPRESSION_CODEC));
        ServerTls serverTls = ServerTls.fromConf(conf, TlsConfig.Group.APPLICATION);
        // The driver talks to the masters and to the workers' control ports: the internal group.
        ClientTls internalTls = ClientTls.fromConf(conf, TlsConfig.Group.INTERNAL);
        this.connections = new TransportClientFactory(
                        conf,
                        "estuary-driver",
                        secret == null ? Credentials.NONE : Credentials.application(appId, secret))
                .withTls(internalTls);
        this.master = new MasterClient(connections, conf.get(MasterConfig.ENDPOINTS), clock);
        this.masterWaitMs = conf.get(ClientConfig.MASTER_WAIT);
        boolean replicate = conf.get(ClientConfig.PUSH_REPLICATE);
        this.registerAtDeclaration = conf.get(ClientConfig.REGISTER_AT_DECLARATION);
        String configuredUser = conf.get(ClientConfig.USER);
        String user = configuredUser.isEmpty() ? System.getProperty("user.name", "") : configuredUser;
        ApplicationPrincipal principal = ApplicationPrincipal.newBuilder()
                .setUser(user)
                .setTenant(conf.get(ClientConfig.TENANT))
                .setHighPriority(conf.get(ClientConfig.HIGH_PRIORITY))
                .build();
        String problem = RequestIds.principalProblem("estuary.client.user/tenant", principal);
        if (problem != null) throw new IllegalArgumentException(problem);
        this.atMaster =
                new ApplicationAtMaster(appId, conf, internalTls, master, masterWaitMs, secret, principal, clock, work);
        QuotaNotices quotas = this.quotas = new QuotaNotices(appId, generations);
        atMaster.onHeartbeatAnswer(quotas::accept);
        this.failedWorkers = new FailedWorkers(clock::millis);
        String tags = TagExpression.parse(conf.get(ClientConfig.TAGS)).toString();
        SlotReserver reserver = new SlotReserver(connections, appId, user);
        SlotLeases leases = new SlotLeases(
                appId,
                master,
                masterWaitMs,
                replicate,
                conf.get(ClientConfig.SLOT_LEASE),
                clock,
                work,
                atMaster::later,
                tags);
        this.registrar = new ShuffleRegistrar(
                appId,
                master,
                masterWaitMs,
                replicate,
                reserver,
                leases,
                failedWorkers,
                atMaster::reportFailedWorkers,
                work,
                tags);
        this.committer = new ShuffleCommitter(
                connections,
                appId,
                conf.get(ClientConfig.COMMIT_RETRIES),
                conf.get(ClientConfig.COMMIT_TIMEOUT),
                conf.get(ClientConfig.COMMIT_UNREACHABLE_TIMEOUT),
                clock);
        this.epochs = new EpochAllocator(
                appId,
                master,
                masterWaitMs,
                reserver,
                failedWorkers,
                atMaster::reportFailedWorkers,
                replicate,
                revives,
                clock,
                tags);
        try {
            atMaster.register();
        } catch (RemoteException e) {
            connections.close();
            work.shutdownNow();
            commits.shutdownNow();
            revives.shutdownNow();
            declarations.shutdownNow();
            atMaster.stopHeartbeats();
            throw new EstuaryException(
                    "Estuary cannot start for application " + appId + ": " + e.getMessage() + ". Check "
                            + MasterConfig.ENDPOINTS.key() + "; Estuary never falls back to another shuffle.",
                    e);
        }
        // Only this application's executors and tasks (proving its secret) connect, never anyone else.
        SecretLookup ownOnly = id ->
                CompletableFuture.completedFuture(Identity.application(appId).equals(id) ? secret.clone() : null);
        this.server = new TransportServer(
                conf,
                "estuary-lifecycle",
                host,
                0,
                new ExecutorRequestHandler(appId, conf, generations, epochs, new ExecutorRequestHandler.Driver() {
                    @Override
                    public CompletableFuture<EpochTable> register(ShuffleState s) {
                        return registrar.register(s);
                    }

                    @Override
                    public void commit(ShuffleState s) {
                        LifecycleManager.this.commit(s);
                    }

                    @Override
                    public void lost(ShuffleState s) {
                        shuffleLostListener.accept(s.engineShuffleId);
                        atMaster.unregisterShuffle(s.shuffleId);
                    }

                    @Override
                    public void checkRunning(int engineShuffleId) {
                        quotas.checkRunning(engineShuffleId);
                    }
                }),
                TransportServer.Options.defaults()
                        .clock(clock)
                        .auth(secret == null ? ServerAuth.off() : ServerAuth.enforce(ownOnly, false))
                        .tls(serverTls));
        atMaster.heartbeatEvery(conf.get(ClientConfig.APPLICATION_HEARTBEAT_INTERVAL));
        LOG.info("Estuary lifecycle manager for {} listening on {}:{}", appId, host, server.port());
    }

    /** Eight random hex digits: two drivers of one engine application never draw the same in practice. */
    private static String instanceSuffix() {
        return String.format("%08x", new java.security.SecureRandom().nextInt());
    }

    /** What the master's newest heartbeat answer says of quotas this application's user, tenant or cluster passed. */
    public java.util.List<String> quotaWarnings() {
        return quotas.warnings();
    }

    public String host() {
        return host;
    }

    public int port() {
        return server.port();
    }

    /**
     * The application's secret (a copy; null with authentication off): the one configured
     * ({@code estuary.auth.application.secret}) or the one this manager made. Engines hand it to their executors and
     * tasks; it is never logged.
     */
    public byte[] applicationSecret() {
        return secret == null ? null : secret.clone();
    }

    /** The Estuary application id: the engine's application id, a dash and this manager's own suffix. */
    public String appId() {
        return appId;
    }

    /**
     * The engine has declared a shuffle (Spark: registered its dependency): its registration starts now, in the
     * background, so that the first map task finds its locations ready. Returns at once; a failed registration is
     * tried again by the first task, as without this call. Nothing happens for a shuffle that already has a generation,
     * one without maps, or with {@code estuary.client.register.atDeclaration} off.
     */
    public void declareShuffle(int engineShuffleId, int numMappers, int numPartitions) {
        if (!registerAtDeclaration || numMappers <= 0 || numPartitions <= 0) return;
        ShuffleState s = generations.declare(engineShuffleId, numMappers, numPartitions);
        if (s != null) registrar.registerAhead(s, declarations);
    }

    /** The Estuary shuffle id of an engine shuffle's newest generation that a writer claimed, or -1 (for tests). */
    public int newestGeneration(int engineShuffleId) {
        ShuffleState s = generations.newest(engineShuffleId);
        return s == null ? -1 : s.shuffleId;
    }

    /**
     * Called with the engine's shuffle id when a reader reports that a generation cannot be read, before the reader
     * fails; engines use it to forget the map outputs so that the maps run again (Spark: unregister them).
     */
    public void onShuffleLost(IntConsumer listener) {
        this.shuffleLostListener = listener;
    }

    /**
     * For engines without stage attempts (MapReduce): once a generation is lost, the next writer of that engine
     * shuffle starts a fresh generation whatever stage attempt it gives, so a rerun map never writes into the lost
     * one. Only sound when every writer that may still start after a loss is a rerun (MapReduce starts its reducers
     * once every map has ended). Call before tasks start.
     */
    public void rerunsReplaceLostGenerations() {
        generations.replaceLostOnAnyWriter();
    }

    /** Revive requests from executors so far, and the master requests they cost (for tests and metrics). */
    public long reviveRequests() {
        return epochs.reviveRequests();
    }

    public long reviveMasterRequests() {
        return epochs.masterRequests();
    }

    /** Commits that ended (successfully or not) so far (for tests and metrics). */
    public long commitsFinished() {
        return commitsFinished.get();
    }

    /** Partitions given new epochs by the driver itself because no master answered (no quorum). */
    public long reviveDriverPlacements() {
        return epochs.driverPlacements();
    }

    // ------------------------------------------------------------------ commit

    private void commit(ShuffleState s) {
        CompletableFuture<EpochTable> slots;
        synchronized (s) {
            slots = s.slots;
        }
        if (slots == null) { // no map wrote anything
            List<PartitionFiles.Builder> none = new ArrayList<>();
            for (int p = 0; p < s.numPartitions; p++)
                none.add(PartitionFiles.newBuilder().setPartitionId(p));
            s.commit.complete(none);
            return;
        }
        slots.thenAcceptAsync(
                        table -> {
                            long t0 = clock.nanos();
                            List<PartitionLocation> all = table.all();
                            try {
                                s.commit.complete(committer.commit(s.shuffleId, s.numPartitions, all));
                            } finally {
                                commitsFinished.incrementAndGet();
                            }
                            LOG.info(
                                    "{} committed ({} locations) in {} ms",
                                    s,
                                    all.size(),
                                    (clock.nanos() - t0) / 1_000_000);
                        },
                        commits)
                .exceptionally(e -> {
                    LOG.error("Commit of {} failed", s, e);
                    s.commit.completeExceptionally(ExecutorRequestHandler.cause(e));
                    return null;
                });
    }

    // ------------------------------------------------------------------ cleanup

    /** Forgets an engine shuffle (every generation); the master tells its workers to delete the data. */
    public void unregisterShuffle(int shuffleId) {
        for (ShuffleState s : generations.remove(shuffleId)) {
            s.forgotten = true;
            CompletableFuture<EpochTable> slots;
            synchronized (s) {
                slots = s.slots;
            }
            // A registration still running (one queued when the shuffle was declared, say) would place the shuffle
            // again after the master forgot it, and so would a lease's placement not yet recorded: the master hears
            // of the end once they are done.
            Runnable end = () -> {
                CompletableFuture<Void> recorded = s.recorded;
                if (recorded != null && !recorded.isDone())
                    recorded.whenComplete((v, e) -> atMaster.unregisterShuffle(s.shuffleId));
                else atMaster.unregisterShuffle(s.shuffleId);
            };
            if (slots != null && !slots.isDone()) slots.whenComplete((t, e) -> end.run());
            else end.run();
        }
    }

    @Override
    public void close() {
        atMaster.unregister();
        work.shutdownNow();
        commits.shutdownNow();
        revives.shutdownNow();
        declarations.shutdownNow();
        server.close();
        connections.close();
    }
}
