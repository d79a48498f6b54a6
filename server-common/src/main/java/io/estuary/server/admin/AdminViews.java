package io.estuary.server.admin;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.estuary.common.protocol.DiskInfo;
import java.util.List;
import java.util.Map;

/**
 * Every JSON answer of the masters' and workers' admin endpoints (docs/rest-api.md), declared once: the servers
 * build these, {@link AdminJson} writes and reads them, and the CLI and tests read them back typed. A field's name
 * is its JSON key, and the order of the components is the order on the wire. Readers ignore keys they do not know,
 * so a newer server can add fields while older CLIs still read it (rolling upgrades).
 *
 * <p>Immutable values: thread-safe.
 */
public final class AdminViews {
    private AdminViews() {}

    // ---- answers of both servers ----

    /** Any failure (4xx, 5xx): what went wrong, for people. */
    public record Error(String error) {}

    /** A disk of a worker, as the worker reports it (also inside the master's worker list). */
    public record Disk(
            String mountPoint, String status, long usableBytes, int activeSlots, long flushMicros, long fetchMicros) {
        public static Disk of(DiskInfo d) {
            return new Disk(
                    d.getMountPoint(),
                    d.getStatus().name(),
                    d.getUsableBytes(),
                    d.getActiveSlots(),
                    d.getAvgFlushMicros(),
                    d.getAvgFetchMicros());
        }
    }

    // ---- masters ----

    /** Which master answered a read, so a reader knows whether it read the leader. */
    public record ServedBy(String id, String role, String version) {}

    /** 421 from a follower asked for a change: the leader's id (null during an election) and RPC endpoint. */
    public record NotLeader(String error, String leaderId, String leader) {}

    /** A registered worker: its id is {@code host:rpcPort:pushPort:fetchPort}; state without the WORKER_ prefix. */
    public record Worker(
            String id,
            String state,
            String reason,
            String version,
            String host,
            int rpcPort,
            int pushPort,
            int fetchPort,
            List<Disk> disks) {}

    /** A shuffle in the application lists: {@code workers} counts the workers holding it. */
    public record ShuffleSummary(int id, int partitions, int locations, int workers) {}

    /** A shuffle in {@code /api/shuffles}: {@code workers} lists the workers holding it. */
    public record ShuffleDetail(int id, int partitions, int locations, List<String> workers) {}

    /**
     * An application in {@code /api/applications}: {@code user} and {@code tenant} are who runs it, bound when it
     * registered (empty while none is bound in the masters' state).
     */
    public record Application(
            String id, String user, String tenant, boolean highPriority, List<ShuffleSummary> shuffles) {}

    public record ApplicationShuffles(String id, List<ShuffleDetail> shuffles) {}

    /** A member of the master group (estuary.master.ha.nodes). */
    public record Peer(String id, String rpc, String raft) {}

    /** {@code GET /api/status} of a master. */
    public record MasterStatus(
            String role,
            String id,
            String version,
            int protocolVersion,
            String leader,
            String leaderId,
            long term,
            long appliedIndex,
            List<Peer> peers,
            List<Worker> workers,
            List<Application> applications) {}

    /**
     * A master as one master sees it: a single master has no {@code raft}; a master knows only its own
     * {@code version} and {@code term} (absent for the others).
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record MasterEntry(
            String id, String rpc, String raft, String role, boolean self, String version, Long term) {}

    /** {@code GET /api/masters}. */
    public record Masters(ServedBy servedBy, List<MasterEntry> masters) {}

    /** {@code GET /api/workers}. */
    public record Workers(ServedBy servedBy, List<Worker> workers) {}

    /** {@code GET /api/applications}. */
    public record Applications(ServedBy servedBy, List<Application> applications) {}

    /** {@code GET /api/shuffles[?app=]}. */
    public record Shuffles(ServedBy servedBy, List<ApplicationShuffles> applications) {}

    /** {@code POST /api/workers/(exclude|activate|decommission)}. */
    public record WorkerStateSet(String worker, String state) {}

    /** {@code POST /api/leadership/transfer}: {@code changed} false when the target already led. */
    public record LeadershipTransfer(String leader, boolean changed) {}

    // ---- quotas ----

    /**
     * A scope's quota (the cluster, a tenant, a user) and what the scope uses. {@code source}: "operator" (set at run
     * time, kept in the replicated state) or "default" (the configuration's); {@code quota}: its limits and policy as
     * {@code estuary quota set} takes them, "" for none. Use counts every copy; {@code bytes}, {@code files} and
     * {@code pushBytesPerSecond} are as the workers last reported them to the leader (null on a follower, which
     * hears no reports). {@code reached}: the limits the scope is at or over (a new shuffle waits or is refused).
     */
    public record QuotaEntry(
            String scope,
            String name,
            String source,
            String quota,
            int applications,
            long shuffles,
            long slots,
            Long bytes,
            Long files,
            Long pushBytesPerSecond,
            List<String> reached) {}

    /** {@code GET /api/quotas}: the cluster, every tenant and user with a quota set or a live application. */
    public record Quotas(ServedBy servedBy, List<QuotaEntry> quotas) {}

    /** {@code POST /api/quotas/(set|remove)}: the scope's quota now ("" once removed: the default applies). */
    public record QuotaChanged(String scope, String name, String quota) {}

    // ---- tags ----

    /**
     * A worker's tags: {@code declared} in its configuration (as it told the leader; null when a follower answers, or
     * before it did), {@code added} and {@code removed} by operators (replicated), and the {@code tags} placements match,
     * the declared ones without the removed, with the added (null when the declared are unknown).
     */
    public record WorkerTagsEntry(
            String worker, List<String> declared, List<String> added, List<String> removed, List<String> tags) {}

    /** The tag expression every application of a scope (user, tenant or cluster) is held to. */
    public record DefaultTagsEntry(String scope, String name, String expression) {}

    /** {@code GET /api/tags}: every registered worker's tags, and the default expressions. */
    public record Tags(ServedBy servedBy, List<WorkerTagsEntry> workers, List<DefaultTagsEntry> defaults) {}

    /** {@code POST /api/tags/worker}: the worker's operator changes and tags now. */
    public record WorkerTagsSet(String worker, List<String> added, List<String> removed) {}

    /** {@code POST /api/tags/default}: the scope's default expression now ("" once cleared). */
    public record DefaultTagsChanged(String scope, String name, String expression) {}

    // ---- workers ----

    /** Where a worker listens. */
    public record WorkerAddress(String host, int rpcPort, int pushPort, int fetchPort, int httpPort) {}

    /** A worker's buffered push data against its limit, and whether it paused reading for want of memory. */
    public record Memory(long heldBytes, long limitBytes, long peakBytes, String level, boolean paused, long pauses) {}

    /**
     * {@code GET /api/status} of a worker. {@code address} is absent before the worker's servers are up;
     * {@code connections} is per server (rpc, push, fetch).
     */
    public record WorkerStatus(
            @JsonInclude(JsonInclude.Include.NON_NULL) WorkerAddress address,
            String version,
            int protocolVersion,
            String state,
            boolean healthy,
            List<String> stalled,
            List<Disk> disks,
            Memory memory,
            long activePartitions,
            int activeShuffles,
            int openStreams,
            Map<String, Integer> connections) {}

    /** {@code POST /api/decommission} of a worker (202): its state now. */
    public record WorkerState(String state) {}
}
