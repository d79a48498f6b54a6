package io.estuary.master;

import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.ReviveSlotsRequest;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.status.NotLeader;
import io.estuary.common.time.Clock;
import io.estuary.master.admin.MasterMetrics;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.slots.SlotAllocator;
import io.estuary.master.state.StateLog;
import io.estuary.network.auth.Authorizer;
import io.estuary.network.auth.Identity;
import io.estuary.network.rpc.ControlRpcHandler;
import io.estuary.network.rpc.RequestLimits;
import io.estuary.network.rpc.SlotRequestCaps;
import io.netty.channel.Channel;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers workers and drivers. Decisions are made here; state changes go through the {@link StateLog}. Only the
 * leader answers (others refuse with NOT_LEADER, naming the leader). Dispatches each request to {@link
 * WorkerRequests} (registration, heartbeats) or {@link ApplicationRequests} (registering secrets, heartbeats, slots,
 * failure reports, unregistering); secrets to workers come from {@link ApplicationSecrets}. Every request is
 * authorized first ({@link #authorize}): an application's requests need that application's identity (or the
 * cluster's), a worker's need the cluster's. Thread-safe: request threads call it concurrently.
 */
final class MasterRpcHandler extends ControlRpcHandler {
    private static final Logger LOG = LoggerFactory.getLogger(MasterRpcHandler.class);
    private final StateLog log;
    private final Clock clock;
    private final WorkerRequests workers;
    private final ApplicationRequests applications;
    private final ApplicationRegistrations appRegistrations;
    private final Authorizer authorizer;
    private final ApplicationSecrets secrets;
    private final RegistrationRateLimiter registrations;
    private final MasterMetrics metrics;
    private final io.estuary.master.quota.QuotaEnforcer enforcer;
    private final io.estuary.master.quota.Admission admission;

    MasterRpcHandler(
            StateLog log,
            SlotAllocator allocator,
            LivenessTracker workerLiveness,
            LivenessTracker appLiveness,
            long applicationTimeoutMs,
            MasterMetrics metrics,
            WorkerFailureTracker failures,
            RequestLimits limits,
            Authorizer authorizer,
            Clock clock,
            ApplicationSecrets secrets,
            RegistrationRateLimiter registrations,
            long slotLeaseMs,
            io.estuary.master.quota.Admission admission) {
        // Each revived partition costs a new location and replica in the answer: a revive holds only what the heap can.
        super(
                "master",
                limits.withListCap(
                        ReviveSlotsRequest.getDescriptor().findFieldByName("partition_ids"),
                        SlotRequestCaps.revivePartitions(Runtime.getRuntime().maxMemory()),
                        SlotRequestCaps.reason(Runtime.getRuntime().maxMemory(), "partition")));
        this.log = log;
        this.clock = clock;
        this.authorizer = authorizer;
        this.secrets = secrets;
        this.registrations = registrations;
        this.metrics = metrics;
        this.workers = new WorkerRequests(log, workerLiveness, applicationTimeoutMs, admission.usage());
        this.admission = admission;
        this.enforcer = admission.enforcer();
        this.appRegistrations = new ApplicationRegistrations(log, secrets, appLiveness, enforcer::answer);
        this.applications = new ApplicationRequests(
                log,
                new SlotPlanner(allocator),
                workers,
                failures,
                appLiveness,
                metrics,
                secrets,
                appRegistrations,
                slotLeaseMs,
                admission);
    }

    /** Forgets unknown shuffles no worker reported for a while; run periodically. */
    void pruneUnknownShuffles(long nowMs) {
        workers.pruneUnknownShuffles(nowMs);
    }

    /** The newest report (disks, load) of a worker since this master leads, or null. */
    WorkerInfo latestReport(String workerId) {
        return workers.latestReport(workerId);
    }

    /** Forgets the load report of a worker declared lost. */
    void workerLost(String workerId) {
        workers.workerLost(workerId);
    }

    /** Called when this master gains or loses leadership. */
    void leadershipChanged() {
        workers.leadershipChanged();
        appRegistrations.leadershipChanged();
        admission.clear();
    }

    /**
     * Checks running applications against their bytes quotas ({@link io.estuary.master.quota.QuotaEnforcer}): the
     * shuffles it stops, as unregistrations for the caller to log.
     */
    List<MasterCommand> enforceQuotas() {
        List<MasterCommand> out = new ArrayList<>();
        for (io.estuary.master.quota.QuotaEnforcer.Stop stop :
                log.stateMachine().read(s -> enforcer.check(s, appRegistrations::principalOf))) {
            LOG.warn("Shuffle {} of {} stopped: {}", stop.shuffleId, stop.app, stop.reason);
            out.add(MasterCommand.newBuilder()
                    .setShuffleUnregistered(io.estuary.master.protocol.ShuffleUnregistered.newBuilder()
                            .setAppId(stop.app)
                            .setShuffleId(stop.shuffleId))
                    .build());
        }
        return out;
    }

    /** The tags a worker declared to this leader, or null when it has not (yet). */
    List<String> declaredTags(String workerId) {
        return workers.tags().declared(workerId);
    }

    /** Who runs {@code app}: logged, or kept by this leader; null when none is bound. */
    io.estuary.common.protocol.ApplicationPrincipal principalOf(String app) {
        return appRegistrations.principalOf(app);
    }

    /** An application expired (no heartbeat in time): forget what this leader kept of it. */
    void applicationExpired(String app) {
        appRegistrations.forget(app);
        enforcer.forget(app);
    }

    @Override
    protected void handle(Channel channel, Request request, Reply reply) {
        authorize(channel, request);
        if (!log.isLeader()) throw NotLeader.exception(log.leaderEndpoint());
        long now = clock.millis();
        switch (request.getPayloadCase()) {
            case REGISTER_WORKER:
                workers.register(request.getRegisterWorker(), reply, now);
                break;
            case WORKER_HEARTBEAT:
                workers.heartbeat(request.getWorkerHeartbeat(), reply, now);
                break;
            case GET_REGISTRATION_KEY:
                reply.ok(secrets.registrationKey());
                break;
            case REGISTER_APPLICATION:
                throttle(channel, request.getRegisterApplication().getAppId());
                appRegistrations.register(request.getRegisterApplication(), Identity.of(channel), reply, now);
                break;
            case GET_APPLICATION_SECRET:
                reply.ok(secrets.secretForWorker(
                        request.getGetApplicationSecret().getAppId(), Identity.of(channel)));
                break;
            case APPLICATION_HEARTBEAT:
                appRegistrations.heartbeat(request.getApplicationHeartbeat(), reply, now);
                break;
            case REQUEST_SLOTS:
                applications.requestSlots(request.getRequestSlots(), reply, now, Identity.of(channel));
                break;
            case LEASE_SLOTS:
                applications.leaseSlots(request.getLeaseSlots(), reply, now, Identity.of(channel));
                break;
            case RECORD_PLACEMENT:
                applications.recordPlacement(request.getRecordPlacement(), reply, now);
                break;
            case REVIVE_SLOTS:
                applications.reviveSlots(request.getReviveSlots(), reply, now, Identity.of(channel));
                break;
            case REPORT_WORKER_FAILURES:
                applications.reportWorkerFailures(request.getReportWorkerFailures(), reply, now);
                break;
            case UNREGISTER_SHUFFLE:
                applications.unregisterShuffle(
                        request.getUnregisterShuffle().getAppId(),
                        request.getUnregisterShuffle().getShuffleId(),
                        reply);
                break;
            case UNREGISTER_APPLICATION:
                applications.unregisterApplication(
                        request.getUnregisterApplication().getAppId(), reply);
                break;
            default:
                throw unsupported(request);
        }
    }

    /** Refuses (RETRY_LATER) a registration past its host's rate ({@link RegistrationRateLimiter}). */
    private void throttle(Channel channel, String appId) {
        java.net.SocketAddress remote = channel.remoteAddress();
        if (!(remote instanceof java.net.InetSocketAddress)) return;
        java.net.InetAddress host = ((java.net.InetSocketAddress) remote).getAddress();
        if (host == null || registrations.tryAcquire(host)) return;
        metrics.registrationThrottled();
        throw new io.estuary.common.status.StatusException(
                io.estuary.common.status.StatusCode.RETRY_LATER,
                "too many application registrations from " + host.getHostAddress() + " (" + appId + " not "
                        + "registered): this host may register "
                        + io.estuary.common.config.MasterConfig.REGISTRATION_RATE_PER_HOST.key() + " per second, "
                        + io.estuary.common.config.MasterConfig.REGISTRATION_BURST_PER_HOST.key()
                        + " at once; retry later");
    }

    /**
     * Refuses (UNAUTHENTICATED, FORBIDDEN) a request its connection's identity may not make. A request type without a
     * rule here is for servers only, so a new one is never open to applications by omission.
     */
    private void authorize(Channel channel, Request request) {
        String name = request.getPayloadCase().name().toLowerCase(java.util.Locale.ROOT);
        switch (request.getPayloadCase()) {
            case APPLICATION_HEARTBEAT:
                authorizer.checkApplication(
                        channel, name, request.getApplicationHeartbeat().getAppId());
                break;
            case REQUEST_SLOTS:
                authorizer.checkApplication(
                        channel, name, request.getRequestSlots().getAppId());
                break;
            case LEASE_SLOTS:
                authorizer.checkApplication(
                        channel, name, request.getLeaseSlots().getAppId());
                break;
            case RECORD_PLACEMENT:
                authorizer.checkApplication(
                        channel, name, request.getRecordPlacement().getAppId());
                break;
            case REVIVE_SLOTS:
                authorizer.checkApplication(
                        channel, name, request.getReviveSlots().getAppId());
                break;
            case REPORT_WORKER_FAILURES:
                authorizer.checkApplication(
                        channel, name, request.getReportWorkerFailures().getAppId());
                break;
            case UNREGISTER_SHUFFLE:
                authorizer.checkApplication(
                        channel, name, request.getUnregisterShuffle().getAppId());
                break;
            case UNREGISTER_APPLICATION:
                authorizer.checkApplication(
                        channel, name, request.getUnregisterApplication().getAppId());
                break;
            case GET_REGISTRATION_KEY:
            case REGISTER_APPLICATION:
                // Open to anonymous connections: registering is how an application gets an identity. Registering
                // another application's id from an authenticated connection is refused by the registration itself.
                break;
            case PAYLOAD_NOT_SET:
                break; // refused as unsupported
            default: // REGISTER_WORKER, WORKER_HEARTBEAT, GET_APPLICATION_SECRET and anything else
                authorizer.checkCluster(channel, name);
                break;
        }
    }
}
