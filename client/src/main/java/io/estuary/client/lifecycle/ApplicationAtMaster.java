package io.estuary.client.lifecycle;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.ApplicationHeartbeatRequest;
import io.estuary.common.protocol.ApplicationPrincipal;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.ReportWorkerFailuresRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.UnregisterApplicationRequest;
import io.estuary.common.protocol.UnregisterShuffleRequest;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.common.time.Clock;
import io.estuary.common.util.NamedThreadFactory;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.MasterClient;
import io.estuary.network.tls.ClientTls;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a {@link LifecycleManager} tells the master about its application, beside registrations and revives: its
 * secret (registered again when the master forgot it), its heartbeats, workers it found unreachable, shuffles it
 * forgot and, at close, its end. Reports and unregistrations run on the manager's work pool and are only logged when
 * they fail; heartbeats run on a thread of their own. Thread-safe.
 */
final class ApplicationAtMaster {
    private static final Logger LOG = LoggerFactory.getLogger(ApplicationAtMaster.class);

    private final String appId;
    private final EstuaryConf conf;
    private final ClientTls internalTls;
    private final MasterClient master;
    private final long masterWaitMs;
    /** The application's secret (null with authentication off). */
    private final byte[] secret;

    /** Who runs the application: sent with its registration and every heartbeat (the master binds the first). */
    private final ApplicationPrincipal principal;

    private final Clock clock;
    private final ExecutorService work;
    private final ScheduledExecutorService heartbeat =
            Executors.newSingleThreadScheduledExecutor(new NamedThreadFactory("estuary-app-heartbeat"));

    /** {@code work}: the manager's pool for calls to the master, shut down by the manager. */
    ApplicationAtMaster(
            String appId,
            EstuaryConf conf,
            ClientTls internalTls,
            MasterClient master,
            long masterWaitMs,
            byte[] secret,
            ApplicationPrincipal principal,
            Clock clock,
            ExecutorService work) {
        this.appId = appId;
        this.conf = conf;
        this.internalTls = internalTls;
        this.master = master;
        this.masterWaitMs = masterWaitMs;
        this.secret = secret;
        this.principal = principal;
        this.clock = clock;
        this.work = work;
    }

    /** Registers the secret (with authentication on) and sends the first heartbeat; fails when no master answers. */
    void register() throws RemoteException {
        if (secret != null) registerSecret();
        sendHeartbeat();
    }

    /** Sends a heartbeat every {@code everyMs}, logging the ones that fail. */
    void heartbeatEvery(long everyMs) {
        heartbeat.scheduleWithFixedDelay(
                () -> {
                    try {
                        sendHeartbeat();
                    } catch (RemoteException | RuntimeException e) {
                        LOG.warn("Application heartbeat failed: {}", e.getMessage());
                    }
                },
                everyMs,
                everyMs,
                TimeUnit.MILLISECONDS);
    }

    /** Runs {@code task} on the work executor after {@code delayMs}; nothing once the heartbeats stopped. */
    void later(Runnable task, long delayMs) {
        try {
            heartbeat.schedule(
                    () -> {
                        try {
                            work.execute(task);
                        } catch (java.util.concurrent.RejectedExecutionException e) {
                            // closing
                        }
                    },
                    delayMs,
                    java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closing
        }
    }

    /** Stops the heartbeats. */
    void stopHeartbeats() {
        heartbeat.shutdownNow();
    }

    /**
     * Registers the application's secret with the master leader, on a connection of its own that proves nothing (the
     * master does not know the application until it is registered).
     */
    private void registerSecret() throws RemoteException {
        try (TransportClientFactory anonymous =
                new TransportClientFactory(conf, "estuary-register").withTls(internalTls)) {
            SecretRegistration.register(
                    new MasterClient(anonymous, master.endpoints(), clock), appId, secret, principal, masterWaitMs);
        }
    }

    /**
     * Tells the master the application lives. With authentication on, a master that no longer knows the application
     * (it expired, or a single master restarted) refuses UNAUTHENTICATED: the secret is registered again, then the
     * heartbeat sent again.
     */
    private void sendHeartbeat() throws RemoteException {
        try {
            askHeartbeat();
        } catch (RemoteException e) {
            if (secret == null || e.status() != StatusCode.UNAUTHENTICATED) throw e;
            LOG.warn(
                    "The master does not know application {} ({}); registering its secret again",
                    appId,
                    e.getMessage());
            registerSecret();
            askHeartbeat();
        }
    }

    private void askHeartbeat() throws RemoteException {
        answers.accept(master.ask(
                Request.newBuilder()
                        .setApplicationHeartbeat(ApplicationHeartbeatRequest.newBuilder()
                                .setAppId(appId)
                                .setPrincipal(principal)),
                io.estuary.common.protocol.ApplicationHeartbeatResponse.parser(),
                masterWaitMs));
    }

    /** Who is told each heartbeat's answer (quota warnings, stopped shuffles). */
    private volatile java.util.function.Consumer<io.estuary.common.protocol.ApplicationHeartbeatResponse> answers =
            r -> {};

    /** Hands every heartbeat's answer to {@code to} from now on. */
    void onHeartbeatAnswer(java.util.function.Consumer<io.estuary.common.protocol.ApplicationHeartbeatResponse> to) {
        this.answers = to;
    }

    void reportFailedWorkers(List<WorkerAddress> workers) {
        work.execute(() -> {
            try {
                master.ask(
                        Request.newBuilder()
                                .setReportWorkerFailures(ReportWorkerFailuresRequest.newBuilder()
                                        .setAppId(appId)
                                        .addAllWorkers(workers)
                                        .setReason("unreachable from " + appId)),
                        Empty.parser(),
                        masterWaitMs);
            } catch (RemoteException | RuntimeException e) {
                LOG.warn("Reporting failed workers {} to the master failed: {}", workers, e.getMessage());
            }
        });
    }

    void unregisterShuffle(int estuaryShuffleId) {
        work.execute(() -> {
            try {
                master.ask(
                        Request.newBuilder()
                                .setUnregisterShuffle(UnregisterShuffleRequest.newBuilder()
                                        .setAppId(appId)
                                        .setShuffleId(estuaryShuffleId)),
                        Empty.parser(),
                        masterWaitMs);
            } catch (RemoteException e) {
                LOG.warn("Unregistering shuffle {} failed: {}", estuaryShuffleId, e.getMessage());
            }
        });
    }

    /** Stops the heartbeats and tells the master the application ended (waiting at most 10 s). */
    void unregister() {
        heartbeat.shutdownNow();
        try {
            master.ask(
                    Request.newBuilder()
                            .setUnregisterApplication(
                                    UnregisterApplicationRequest.newBuilder().setAppId(appId)),
                    Empty.parser(),
                    Math.min(masterWaitMs, 10_000));
        } catch (RemoteException e) {
            LOG.warn("Unregistering application {} failed: {}; the master will expire it", appId, e.getMessage());
        }
    }
}
