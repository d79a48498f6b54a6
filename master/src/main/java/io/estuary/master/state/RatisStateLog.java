package io.estuary.master.state;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.ConfigException;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.config.TlsConfig;
import io.estuary.common.status.NotLeader;
import io.estuary.common.time.Clock;
import io.estuary.common.util.EstuaryException;
import io.estuary.common.util.GuardedScheduledExecutor;
import io.estuary.common.util.GuardedThreadPool;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.state.raft.AuthenticatedRaftRpc;
import io.estuary.master.state.raft.RaftAuthFailures;
import io.estuary.master.state.raft.RaftTls;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master log replicated with Apache Ratis. Only the leader appends: a command submitted here is committed by
 * a quorum, then applied by every master's {@link MasterStateMachine} in the same order. Its Ratis settings come
 * from {@link RaftServerProperties}, the members' formats are polled by {@link GroupFormatsPoller}, and
 * {@link RaftServerCloser} releases the storage at close. Thread-safe.
 */
public final class RatisStateLog implements StateLog {
    private static final Logger LOG = LoggerFactory.getLogger(RatisStateLog.class);
    /** One group per Estuary master cluster; fixed so every master agrees on it. */
    static final RaftGroupId GROUP_ID = RaftGroupId.valueOf(UUID.fromString("6e0e3c1a-5e57-4a7a-9d0b-e57ae2a0e001"));

    private final MasterStateMachine stateMachine;
    private final MasterNodes nodes;
    private final RaftServer server;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private final long submitTimeoutMs;
    private final RaftAuthFailures authFailures = new RaftAuthFailures();
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService watchdog = new GuardedScheduledExecutor("master-raft-watchdog");
    /**
     * Hands requests to Raft. Ratis may take its server lock while it changes role (stepping down waits on
     * appenders to dead peers), so a submit can block for a while; it must never block a network thread.
     */
    private final java.util.concurrent.ExecutorService submitter = new GuardedThreadPool("master-raft-submit", 1);

    private volatile boolean closing;

    /** What every member of the group applies: what this master logs and snapshots. */
    private final GroupFormats groupFormats;
    /** Asks the other members which formats they apply. */
    private final GroupFormatsPoller formatsPoller;

    /**
     * Starts this master's Raft server. {@code onRaftLost} runs when the Raft server stops on its own (e.g. after a
     * long JVM pause): a master without it must not linger with open ports.
     */
    public RatisStateLog(EstuaryConf conf, MasterNodes nodes, String selfId, Runnable onRaftLost) throws IOException {
        this.nodes = nodes;
        this.stateMachine = new MasterStateMachine(conf);
        this.submitTimeoutMs = conf.get(MasterConfig.HA_SUBMIT_TIMEOUT);
        MasterNodes.Node self = nodes.get(selfId);
        List<RaftPeer> peers = new ArrayList<>();
        for (MasterNodes.Node n : nodes.all()) {
            peers.add(RaftPeer.newBuilder()
                    .setId(n.id)
                    .setAddress(n.raftEndpoint())
                    .build());
        }
        this.groupFormats = new GroupFormats(
                selfId, nodes.all().stream().map(n -> n.id).collect(java.util.stream.Collectors.toList()));
        RaftProperties p = RaftServerProperties.forServer(conf, self);
        Parameters parameters = null;
        if (conf.get(AuthConfig.ENABLED)) {
            // Every connection between masters proves the cluster secret first (no secret on the wire).
            byte[] secret = io.estuary.server.auth.ClusterSecret.bytesOf(conf);
            parameters = AuthenticatedRaftRpc.configure(
                    p,
                    secret,
                    authFailures,
                    !io.estuary.server.auth.ServerSecurity.enforced(conf),
                    RaftTls.fromConf(conf, Clock.system()));
            java.util.Arrays.fill(secret, (byte) 0);
        } else if (conf.get(TlsConfig.INTERNAL_ENABLED)) {
            // Ratis' own netty transport has no TLS: refuse rather than run the Raft port in the clear.
            throw new ConfigException(TlsConfig.INTERNAL_ENABLED.key()
                    + "=true needs " + AuthConfig.ENABLED.key() + "=true on a master with several nodes: TLS on the "
                    + "Raft port comes with the authenticated Raft transport (the plain one has no TLS)");
        }
        this.server = RaftServer.newBuilder()
                .setServerId(RaftPeerId.valueOf(selfId))
                .setGroup(RaftGroup.valueOf(GROUP_ID, peers))
                .setProperties(p)
                .setParameters(parameters)
                .setStateMachine(new RatisStateMachine(
                        stateMachine,
                        this::leadershipChanged,
                        why -> applyFailed(why, onRaftLost),
                        groupFormats::snapshotFormat))
                .setOption(RaftStorage.StartupOption.RECOVER)
                .build();
        try {
            server.start();
        } catch (IOException | RuntimeException e) {
            RaftServerCloser.afterFailedStart(server, GROUP_ID, e); // e.g. the Raft port is taken
            throw e;
        }
        this.formatsPoller = new GroupFormatsPoller(server, nodes, peers, groupFormats, () -> closing);
        formatsPoller.start();
        watchdog.scheduleWithFixedDelay(
                () -> {
                    if (!closing && !alive()) {
                        LOG.error(
                                "This master's Raft server has stopped; the master exits rather than linger without it");
                        onRaftLost.run();
                    }
                },
                1,
                1,
                TimeUnit.SECONDS);
        LOG.info("Raft server {} started on {} with peers {}", selfId, self.raftEndpoint(), peers);
    }

    @Override
    public int groupLogFormat() {
        return groupFormats.logFormat();
    }

    /** What every member of the group applies, as far as this master knows. */
    GroupFormats groupFormats() {
        return groupFormats;
    }

    /** A committed entry could not be applied: stop the Raft server (not on the apply thread) and the master. */
    private void applyFailed(String why, Runnable onRaftLost) {
        if (closing) return;
        closing = true; // the watchdog must not report it a second time
        Thread t = new Thread(
                () -> {
                    LOG.error("Stopping this master: {}", why);
                    try {
                        server.close();
                    } catch (IOException | RuntimeException e) {
                        LOG.warn("Closing the Raft server failed", e);
                    }
                    onRaftLost.run();
                },
                "master-apply-failed");
        t.setDaemon(true);
        t.start();
    }

    private DivisionInfo info() {
        try {
            return server.getDivision(GROUP_ID).getInfo();
        } catch (IOException e) {
            return null;
        }
    }

    private boolean alive() {
        if (server.getLifeCycleState().isClosingOrClosed()) return false;
        DivisionInfo i = info();
        return i != null && i.isAlive() && !i.getLifeCycleState().isClosingOrClosed();
    }

    private void leadershipChanged() {
        for (Runnable r : listeners) r.run();
    }

    @Override
    public CompletableFuture<Void> submit(MasterCommand command) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            CommandFormats.check(command); // what the leader itself cannot apply is refused, never logged
            // and so is what another member cannot apply (a master of the last release, during a rolling upgrade)
            groupFormats.checkLoggable(CommandFormats.logFormatOf(command), String.valueOf(command.getCommandCase()));
        } catch (RuntimeException e) {
            done.completeExceptionally(e);
            return done;
        }
        if (!isLeader()) {
            done.completeExceptionally(new NotLeaderException(leaderEndpoint()));
            return done;
        }
        RaftClientRequest req = RaftClientRequest.newBuilder()
                .setClientId(clientId)
                .setServerId(server.getId())
                .setGroupId(GROUP_ID)
                .setCallId(callIds.incrementAndGet())
                .setMessage(Message.valueOf(UnsafeByteOperations.unsafeWrap(command.toByteArray())))
                .setType(RaftClientRequest.writeRequestType())
                .build();
        try {
            submitter.execute(() -> submitNow(req, command, done));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            done.completeExceptionally(new NotLeaderException(null, "this master is shutting down"));
        }
        // Without a quorum nothing commits; fail after a while, as "not the leader", so callers retry (elsewhere).
        return done.orTimeout(submitTimeoutMs, TimeUnit.MILLISECONDS).handle((v, e) -> {
            Throwable c =
                    e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
            if (c instanceof java.util.concurrent.TimeoutException) {
                throw new NotLeaderException(null, "no quorum committed the change within " + submitTimeoutMs + " ms");
            }
            if (c instanceof RuntimeException) throw (RuntimeException) c;
            if (c != null) throw new EstuaryException(String.valueOf(c.getMessage()), c);
            return v;
        });
    }

    private void submitNow(RaftClientRequest req, MasterCommand command, CompletableFuture<Void> done) {
        try {
            server.submitClientRequestAsync(req).whenComplete((RaftClientReply reply, Throwable e) -> {
                if (e != null) {
                    done.completeExceptionally(e);
                } else if (reply.isSuccess()) {
                    done.complete(null);
                } else if (reply.getNotLeaderException() != null
                        || reply.getLeaderNotReadyException() != null
                        || reply.getException() instanceof LeaderSteppingDownException) {
                    // Leadership is moving: the caller retries at the leader (named when known).
                    done.completeExceptionally(new NotLeaderException(suggestedLeader(reply)));
                } else {
                    done.completeExceptionally(new EstuaryException(
                            "the master log refused " + command.getCommandCase() + ": " + reply.getException()));
                }
            });
        } catch (IOException | RuntimeException e) {
            done.completeExceptionally(e);
        }
    }

    @Override
    public MasterStateMachine stateMachine() {
        return stateMachine;
    }

    @Override
    public boolean isLeader() {
        DivisionInfo i = info();
        // Ready: the new leader has applied everything committed before its term, so its state is current.
        return i != null && i.isLeader() && i.isLeaderReady();
    }

    @Override
    public String leaderEndpoint() {
        DivisionInfo i = info();
        RaftPeerId leader = i == null ? null : i.getLeaderId();
        MasterNodes.Node n = leader == null ? null : nodes.find(leader.toString());
        return n == null ? null : n.rpcEndpoint();
    }

    private String suggestedLeader(RaftClientReply reply) {
        if (reply.getNotLeaderException() != null
                && reply.getNotLeaderException().getSuggestedLeader() != null) {
            MasterNodes.Node n = nodes.find(
                    reply.getNotLeaderException().getSuggestedLeader().getId().toString());
            if (n != null) return n.rpcEndpoint();
        }
        return leaderEndpoint();
    }

    public String leaderId() {
        DivisionInfo i = info();
        return i == null || i.getLeaderId() == null ? null : i.getLeaderId().toString();
    }

    @Override
    public long term() {
        DivisionInfo i = info();
        return i == null ? 0 : i.getCurrentTerm();
    }

    @Override
    public long appliedIndex() {
        DivisionInfo i = info();
        return i == null ? 0 : i.getLastAppliedIndex();
    }

    @Override
    public void onLeadershipChange(Runnable listener) {
        listeners.add(listener);
    }

    /** Asks the leader (this master) to hand leadership to {@code targetId}; waits up to {@code timeoutMs}. */
    public void transferLeadership(String targetId, long timeoutMs) throws IOException {
        RaftClientReply reply = server.transferLeadership(new TransferLeadershipRequest(
                clientId,
                server.getId(),
                GROUP_ID,
                callIds.incrementAndGet(),
                RaftPeerId.valueOf(targetId),
                timeoutMs));
        if (!reply.isSuccess())
            throw new IOException("leadership transfer to " + targetId + " failed: " + reply.getException());
    }

    @Override
    public long raftAuthenticationFailures() {
        return authFailures.count();
    }

    @Override
    public long raftUnauthenticatedAdmitted() {
        return authFailures.admittedCount();
    }

    /**
     * Stops the Raft server but nothing else, as Ratis does on its own after e.g. a long JVM pause. For tests of
     * what the master does then.
     */
    public void stopRaftServerOnly() throws IOException {
        server.close();
    }

    @Override
    public void close() {
        closing = true;
        watchdog.shutdownNow();
        submitter.shutdownNow();
        formatsPoller.close();
        RaftServerCloser.close(server, GROUP_ID);
    }

    /** A change sent to a master that is not the leader. */
    public static final class NotLeaderException extends io.estuary.common.status.StatusException {
        public NotLeaderException(String leaderEndpoint) {
            super(
                    io.estuary.common.status.StatusCode.NOT_LEADER,
                    NotLeader.exception(leaderEndpoint).getMessage());
        }

        NotLeaderException(String leaderEndpoint, String why) {
            this(leaderEndpoint);
            LOG.info("Not leading: {}", why);
        }
    }
}
