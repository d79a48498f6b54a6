package io.estuary.master.admin;

import io.estuary.common.protocol.WorkerState;
import io.estuary.master.state.MasterNodes;
import io.estuary.master.state.MasterState;
import io.estuary.master.state.StateLog;
import java.io.IOException;
import java.util.function.Function;

/**
 * The master as its admin surface (HTTP endpoint and metrics) sees it: what they read and the two operator actions.
 * Declared here and implemented by {@code io.estuary.master.Master} so that {@code master.admin} does not depend on
 * the root package that builds it (the layering rule "no sub-package imports its module's root"). Implementations
 * are called from the admin HTTP and metrics-scrape threads and must be thread-safe.
 */
public interface AdministeredMaster {
    /** The release this master reports. */
    String version();

    /** This master's id in its HA group ("" for a single master). */
    String id();

    /** This master's RPC endpoint, host:port. */
    String endpoint();

    boolean isLeader();

    StateLog log();

    /** The masters of the HA group; empty for a single master. */
    MasterNodes nodes();

    /** Reads the agreed state under its lock. */
    <T> T state(Function<MasterState, T> reader);

    /**
     * Who runs an application: its principal in the agreed state, or the one this leader keeps without logging it
     * (authentication off, or a group with a master that cannot apply it); null when none is bound.
     */
    default io.estuary.common.protocol.ApplicationPrincipal principalOf(String app) {
        return state(s -> s.principal(app));
    }

    /** The tags a worker declares (estuary.worker.tags) as it told this leader; null on a follower or before it did. */
    java.util.List<String> declaredTags(String workerId);

    /** The quotas and the usage this master measures them by (usage only while it leads). */
    io.estuary.master.quota.Admission admission();

    /** Sets a worker's state through the log (leader only); returns once committed. */
    void setWorkerState(String workerId, WorkerState state, String reason);

    /** Hands leadership to master {@code targetId} (leader of an HA group only). */
    void transferLeadership(String targetId) throws IOException;
}
