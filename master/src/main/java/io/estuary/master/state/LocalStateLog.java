package io.estuary.master.state;

import io.estuary.master.protocol.MasterCommand;
import java.util.concurrent.CompletableFuture;

/** The log of a single master: a command is committed as soon as it is applied. */
public final class LocalStateLog implements StateLog {
    private final MasterStateMachine stateMachine;
    private volatile String endpoint;

    public LocalStateLog() {
        this(new io.estuary.common.config.EstuaryConf());
    }

    public LocalStateLog(io.estuary.common.config.EstuaryConf conf) {
        this.stateMachine = new MasterStateMachine(conf);
    }

    /** Set once the master's port is bound. */
    public void setEndpoint(String endpoint) {
        this.endpoint = endpoint;
    }

    @Override
    public CompletableFuture<Void> submit(MasterCommand command) {
        try {
            stateMachine.apply(command);
            return CompletableFuture.completedFuture(null);
        } catch (RuntimeException e) {
            CompletableFuture<Void> f = new CompletableFuture<>();
            f.completeExceptionally(e);
            return f;
        }
    }

    @Override
    public MasterStateMachine stateMachine() {
        return stateMachine;
    }

    @Override
    public boolean isLeader() {
        return true;
    }

    @Override
    public String leaderEndpoint() {
        return endpoint;
    }

    @Override
    public long appliedIndex() {
        return stateMachine.appliedCommands();
    }

    @Override
    public void onLeadershipChange(Runnable listener) {
        // a single master leads from start to end
    }
}
