package io.estuary.master.state;

import io.estuary.master.protocol.MasterCommand;
import java.io.Closeable;
import java.util.concurrent.CompletableFuture;

/**
 * The only way master state changes: a command is appended to the log and, once committed, applied to the state
 * machine. With one master the log is local; with several it is a Raft log and only the leader appends.
 */
public interface StateLog extends Closeable {
    /** Completes when the command has been committed and applied. */
    CompletableFuture<Void> submit(MasterCommand command);

    MasterStateMachine stateMachine();

    /** Whether this master may take decisions (always, for a single master; the Raft leader otherwise). */
    boolean isLeader();

    /** The RPC endpoint (host:port) of the current leader, or null while none is known. */
    String leaderEndpoint();

    /** Raft term (0 for a single master). */
    default long term() {
        return 0;
    }

    /** Connections to this master's Raft port refused for want of the cluster secret (0 for a single master). */
    default long raftAuthenticationFailures() {
        return 0;
    }

    /** Connections to this master's Raft port admitted without a proof (permissive mode; 0 for a single master). */
    default long raftUnauthenticatedAdmitted() {
        return 0;
    }

    /**
     * The newest Raft log format ({@link io.estuary.common.release.Format#RAFT_LOG}) every master of the group applies
     * as far as this one knows: what it may log now. This release's format for a single master.
     */
    default int groupLogFormat() {
        return io.estuary.common.release.Format.RAFT_LOG.version();
    }

    /** Log index of the last applied change. */
    long appliedIndex();

    /** Called (on some internal thread; must not block) whenever this master gains or loses leadership. */
    void onLeadershipChange(Runnable listener);

    @Override
    default void close() {}
}
