package io.estuary.master.state;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import java.io.File;
import java.util.Collections;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.netty.NettyConfigKeys;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/**
 * The Ratis settings of a master's Raft server and of the client it asks its peers with, from the master's
 * configuration: where it listens and stores its log, its election timeouts, snapshots and log segments. The
 * transport is Ratis' plain netty one; {@link io.estuary.master.state.raft.AuthenticatedRaftRpc#configure} replaces
 * it when authentication is on. Stateless.
 */
final class RaftServerProperties {
    private RaftServerProperties() {}

    /** The properties of {@code self}'s Raft server. */
    static RaftProperties forServer(EstuaryConf conf, MasterNodes.Node self) {
        RaftProperties p = new RaftProperties();
        RaftConfigKeys.Rpc.setType(p, SupportedRpcType.NETTY);
        NettyConfigKeys.Server.setHost(p, self.host);
        NettyConfigKeys.Server.setPort(p, self.raftPort);
        RaftServerConfigKeys.setStorageDir(
                p, Collections.singletonList(new File(conf.get(MasterConfig.HA_DIR), self.id)));
        long election = conf.get(MasterConfig.HA_ELECTION_TIMEOUT);
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(election, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(election * 2, TimeUnit.MILLISECONDS));
        // A leader cut off from the others steps down within an election timeout, so a deposed leader stops
        // answering soon after a new one is elected.
        RaftServerConfigKeys.LeaderElection.setLeaderStepDownWaitTime(
                p, TimeDuration.valueOf(election * 2, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, conf.get(MasterConfig.HA_SNAPSHOT_THRESHOLD));
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 2);
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
        RaftServerConfigKeys.Log.setPurgeGap(p, 1);
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf("1MB"));
        RaftServerConfigKeys.Log.setPreallocatedSize(p, SizeInBytes.valueOf("256KB"));
        RaftServerConfigKeys.Log.Appender.setInstallSnapshotEnabled(p, true);
        return p;
    }

    /** The properties of the client that asks peers for their formats: one server each, answered within 3 s. */
    static RaftProperties forPeerClient() {
        RaftProperties p = new RaftProperties();
        RaftConfigKeys.Rpc.setType(p, SupportedRpcType.NETTY);
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(3, TimeUnit.SECONDS));
        return p;
    }
}
