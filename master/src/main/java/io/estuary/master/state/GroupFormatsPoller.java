package io.estuary.master.state;

import io.estuary.common.util.GuardedScheduledExecutor;
import io.estuary.master.protocol.MasterFormats;
import io.estuary.master.state.raft.AuthenticatedRaftRpc;
import java.io.Closeable;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks every other member of the master group, every few seconds on a thread of its own, which formats it applies,
 * and tells {@link GroupFormats}; a member that does not answer counts as the oldest release and is asked less and
 * less often. Thread-safe: {@link #start} and {@link #close} from any thread; the asking and its back-off state are
 * confined to the poller thread.
 */
final class GroupFormatsPoller implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(GroupFormatsPoller.class);
    /** How often each member of the group is asked which formats it applies ({@link GroupFormats}). */
    private static final long ASK_FORMATS_EVERY_SECONDS = 5;

    private final RaftServer server;
    private final MasterNodes nodes;
    private final GroupFormats groupFormats;
    /** True once the log closes or stops: no member is asked any more. */
    private final BooleanSupplier stopped;
    /** Asks the other members their formats (Ratis reads to one server each, no retries). */
    private final RaftClient peerClient;

    private final ScheduledExecutorService poller = new GuardedScheduledExecutor("master-raft-formats");
    /**
     * Per member: {polls to skip before it is asked again, the next such skip}. A member that does not answer is
     * asked less and less often (down to once a minute), since each failed attempt makes Ratis's client log a
     * connection error. Poller thread only.
     */
    private final Map<String, int[]> askBackoff = new HashMap<>();

    GroupFormatsPoller(
            RaftServer server,
            MasterNodes nodes,
            List<RaftPeer> peers,
            GroupFormats groupFormats,
            BooleanSupplier stopped) {
        this.server = server;
        this.nodes = nodes;
        this.groupFormats = groupFormats;
        this.stopped = stopped;
        this.peerClient = RaftClient.newBuilder()
                .setRaftGroup(RaftGroup.valueOf(RatisStateLog.GROUP_ID, peers))
                .setProperties(RaftServerProperties.forPeerClient())
                .setRetryPolicy(RetryPolicies.noRetry())
                .build();
    }

    void start() {
        poller.scheduleWithFixedDelay(this::askFormats, 0, ASK_FORMATS_EVERY_SECONDS, TimeUnit.SECONDS);
    }

    /** Asks every other member which formats it applies; one that does not answer counts as the oldest release. */
    private void askFormats() {
        for (MasterNodes.Node n : nodes.all()) {
            if (stopped.getAsBoolean()) return;
            if (n.id.equals(server.getId().toString())) continue;
            int[] backoff = askBackoff.computeIfAbsent(n.id, id -> new int[2]);
            if (backoff[0] > 0) {
                backoff[0]--;
                continue;
            }
            boolean answered = false;
            try {
                // Blocking: the client's ordered async stream closes for good at its first failure (a member down).
                // A stale read at index 0 is answered by any member, leader or not.
                // With authentication, over the authenticated transport (Ratis' client does not authenticate).
                RaftClientReply r = AuthenticatedRaftRpc.staleRead(server, RaftPeerId.valueOf(n.id));
                if (r == null) r = peerClient.io().sendStaleRead(Message.EMPTY, 0, RaftPeerId.valueOf(n.id));
                if (r.isSuccess()) {
                    Message m = r.getMessage();
                    byte[] bytes = m == null ? new byte[0] : m.getContent().toByteArray();
                    groupFormats.reported(n.id, MasterFormats.parseFrom(bytes));
                    answered = true;
                }
            } catch (IOException | RuntimeException e) {
                // down or restarting: counted below
            }
            if (answered) {
                backoff[1] = 0;
            } else {
                groupFormats.unreachable(n.id);
                backoff[1] = Math.min(Math.max(1, backoff[1] * 2), 12);
                backoff[0] = backoff[1];
            }
        }
    }

    /** Stops asking and closes the client (a poll under way may still end). */
    @Override
    public void close() {
        poller.shutdownNow();
        try {
            peerClient.close();
        } catch (IOException e) {
            LOG.warn("Closing the Raft client failed", e);
        }
    }
}
