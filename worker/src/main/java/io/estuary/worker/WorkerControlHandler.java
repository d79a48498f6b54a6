package io.estuary.worker;

import io.estuary.common.protocol.ApplicationPrincipal;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.ReserveSlotsRequest;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.network.auth.Authorizer;
import io.estuary.network.rpc.ControlRpcHandler;
import io.estuary.worker.auth.ApplicationSecretCache;
import io.estuary.worker.commit.CommitHandler;
import io.estuary.worker.lifecycle.PushGate;
import io.estuary.worker.partition.PartitionRegistry;
import io.netty.channel.Channel;

/**
 * Control requests from drivers: reserve slots before a stage, commit them at its end. Each is authorized against the
 * application it names (its own identity or the cluster's may). A reservation may carry the application's secret
 * sealed by the master under the cluster-derived key (the driver got it with the slots and cannot open it): the
 * worker caches it before answering, so the executors' pushes to these slots authenticate without asking the master
 * (even while none leads). Why the driver carries it rather than the master telling the workers: drivers, not the
 * master, reserve slots (the master never connects to workers), and the slot answer is the one moment the master and
 * the driver meet per shuffle; sealed, it is nothing to the driver or anyone on the wire, and bound to the
 * application's id, so application B cannot plant a secret for A (its reservation for A is FORBIDDEN, and A's seal
 * does not open as B's). Thread-safe.
 */
final class WorkerControlHandler extends ControlRpcHandler {
    private final PartitionRegistry registry;
    private final CommitHandler commits;
    private final io.estuary.worker.push.CongestionControl congestion;
    private final PushGate gate;
    private final Authorizer authorizer;
    /** Null with authentication off: a sealed secret in a reservation is then ignored. */
    private final ApplicationSecretCache secrets;

    WorkerControlHandler(
            PartitionRegistry registry,
            PushGate gate,
            io.estuary.worker.push.CongestionControl congestion,
            io.estuary.network.rpc.RequestLimits limits,
            long commitMaxWaitMs,
            Authorizer authorizer,
            ApplicationSecretCache secrets) {
        super("worker", capReservations(limits, Runtime.getRuntime().maxMemory()));
        this.authorizer = authorizer;
        this.secrets = secrets;
        this.registry = registry;
        this.gate = gate;
        this.congestion = congestion;
        this.commits = new CommitHandler(registry, commitMaxWaitMs);
    }

    /** Each reserved location costs a partition writer: a reservation may hold only what the heap can. */
    static io.estuary.network.rpc.RequestLimits capReservations(
            io.estuary.network.rpc.RequestLimits limits, long maxHeapBytes) {
        return limits.withListCap(
                ReserveSlotsRequest.getDescriptor().findFieldByName("locations"),
                io.estuary.network.rpc.SlotRequestCaps.reserveLocations(maxHeapBytes),
                io.estuary.network.rpc.SlotRequestCaps.reason(maxHeapBytes, "location"));
    }

    @Override
    protected void handle(Channel channel, Request request, Reply reply) {
        switch (request.getPayloadCase()) {
            case RESERVE_SLOTS: {
                ReserveSlotsRequest r = request.getReserveSlots();
                authorizer.checkApplication(channel, "reserve_slots", r.getAppId());
                if (!gate.isOpen()) {
                    // The master already places nothing here; a driver that raced it places the shuffle elsewhere.
                    throw new StatusException(StatusCode.RETRY_LATER, "worker is stopping: it takes no new slots");
                }
                // Before reserving: a seal that does not open refuses the whole request, with nothing reserved.
                if (secrets != null && !r.getSealedSecret().isEmpty()) {
                    secrets.learnSealed(r.getAppId(), r.getSealedSecret().toByteArray());
                }
                String boundUser = null;
                if (secrets != null && !r.getSealedPrincipal().isEmpty()) {
                    ApplicationPrincipal p = secrets.openPrincipal(
                            r.getAppId(), r.getSealedPrincipal().toByteArray());
                    if (!r.getUser().isEmpty() && !r.getUser().equals(p.getUser())) {
                        throw new StatusException(
                                StatusCode.FORBIDDEN,
                                "the reservation of " + r.getAppId() + " claims user '" + r.getUser()
                                        + "'; the masters bound the application to user '" + p.getUser() + "'");
                    }
                    boundUser = p.getUser();
                }
                if (r.getByLease()) registry.refuseUnwritableDisks(r.getLocationsList());
                registry.reserve(r.getAppId(), r.getShuffleId(), r.getLocationsList());
                // With authentication a user counts only by the master's seal: an unsealed claim is the driver's word
                // (its pushes then count under the unknown user). Without it, the first claim stays.
                if (boundUser != null) congestion.boundUser(r.getAppId(), boundUser);
                else if (secrets == null) congestion.applicationUser(r.getAppId(), r.getUser());
                reply.ok(Empty.getDefaultInstance());
                break;
            }
            case COMMIT_FILES:
                authorizer.checkApplication(
                        channel, "commit_files", request.getCommitFiles().getAppId());
                commits.commit(request.getCommitFiles(), reply);
                break;
            default:
                throw unsupported(request);
        }
    }
}
