package io.estuary.master.state;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.release.Format;
import io.estuary.master.protocol.ApplicationRegistered;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.protocol.MasterSnapshot;
import io.estuary.master.protocol.ShuffleUnregistered;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.netty.NettyConfigKeys;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.Test;

/**
 * A real Raft group of two masters of this release and one that answers as release 0.1.0 does: a Ratis server whose
 * state machine has no answer to the formats question (0.1.0's does not override Ratis's {@code query}). The masters
 * of this release learn it over Raft and, while it is a member, every snapshot they write is in 0.1.0's form (the
 * leader may send any of them to it).
 */
class MixedReleaseGroupTest {

    private static int freePort() throws IOException {
        return io.estuary.testing.process.FreePorts.take(1)[0]; // outside the ephemeral range (see FreePorts)
    }

    @Test
    void mastersWriteSnapshotsTheOldMemberInstalls() throws Exception {
        Path dir = Files.createTempDirectory("estuary-mixed-raft");
        List<String> entries = new ArrayList<>();
        for (int i = 0; i < 3; i++) entries.add("m" + i + "=127.0.0.1:" + freePort() + ":" + freePort());
        MasterNodes nodes = MasterNodes.parse(entries);
        RaftServer old = null;
        List<RatisStateLog> current = new ArrayList<>();
        try {
            // The old member never stands for election (its timeout is long), so a master of this release leads.
            old = oldReleaseStandIn(nodes, dir.resolve("m2"));
            for (int i = 0; i < 2; i++) {
                // Authentication off: release 0.1.0 cannot authenticate on the Raft port.
                EstuaryConf conf = new EstuaryConf()
                        .set(io.estuary.common.config.AuthConfig.ENABLED, "false")
                        .set(MasterConfig.HA_DIR, dir.toString())
                        .set(MasterConfig.HA_ELECTION_TIMEOUT, "300ms")
                        .set(MasterConfig.HA_SNAPSHOT_THRESHOLD, "20");
                current.add(new RatisStateLog(conf, nodes, "m" + i, () -> {}));
            }
            waitFor(() -> current.stream().anyMatch(RatisStateLog::isLeader), 60_000, "a leader of this release");
            for (RatisStateLog m : current) {
                waitFor(
                        () -> GroupFormats.RELEASE_0_1_0.equals(m.groupFormats().reportedBy("m2"))
                                && GroupFormats.ours().equals(m.groupFormats().reportedBy(other(m, current))),
                        60_000,
                        "each master of this release heard both other members");
                assertEquals(1, m.groupFormats().snapshotFormat());
            }
            RatisStateLog leader =
                    current.stream().filter(RatisStateLog::isLeader).findFirst().get();
            leader.submit(MasterCommand.newBuilder()
                            .setApplicationRegistered(
                                    ApplicationRegistered.newBuilder().setAppId("a"))
                            .build())
                    .get(30, TimeUnit.SECONDS);
            for (int id = 0; id < 40; id++) { // past the snapshot threshold: every member takes one
                leader.submit(MasterCommand.newBuilder()
                                .setShuffleUnregistered(ShuffleUnregistered.newBuilder()
                                        .setAppId("a")
                                        .setShuffleId(id))
                                .build())
                        .get(30, TimeUnit.SECONDS);
            }
            for (int i = 0; i < 2; i++) {
                Path sm = dir.resolve("m" + i);
                waitFor(() -> latestSnapshot(sm) != null, 60_000, "m" + i + " took a snapshot");
                MasterSnapshot snap;
                try (java.io.InputStream in = Files.newInputStream(latestSnapshot(sm))) {
                    snap = MasterSnapshot.parseFrom(in);
                }
                assertEquals(1, snap.getUnregisteredCount());
                assertEquals(
                        0, snap.getUnregistered(0).getRangeEndsCount(), "m" + i + " wrote ranges 0.1.0 cannot read");
                assertTrue(snap.getUnregistered(0).getShuffleIdsCount() > 1, "single ids, as 0.1.0 wrote them");
            }
            assertTrue(Format.RAFT_SNAPSHOT.version() > 1, "this release writes ranges when every member reads them");
        } finally {
            for (RatisStateLog m : current) m.close();
            if (old != null) old.close();
            try (Stream<Path> s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
    }

    private static String other(RatisStateLog m, List<RatisStateLog> current) {
        return current.indexOf(m) == 0 ? "m1" : "m0";
    }

    /** The newest snapshot file under a master's Raft storage, or null. */
    private static Path latestSnapshot(Path storage) {
        try (Stream<Path> s = Files.walk(storage)) {
            return s.filter(p -> p.getFileName().toString().matches("snapshot\\.\\d+_\\d+"))
                    .max(Comparator.comparingLong(
                            p -> Long.parseLong(p.getFileName().toString().replaceAll(".*_", ""))))
                    .orElse(null);
        } catch (IOException | java.io.UncheckedIOException e) {
            return null; // a file moved meanwhile
        }
    }

    private static RaftServer oldReleaseStandIn(MasterNodes nodes, Path storage) throws IOException {
        List<RaftPeer> peers = new ArrayList<>();
        for (MasterNodes.Node n : nodes.all()) {
            peers.add(RaftPeer.newBuilder()
                    .setId(n.id)
                    .setAddress(n.raftEndpoint())
                    .build());
        }
        MasterNodes.Node self = nodes.get("m2");
        RaftProperties p = new RaftProperties();
        RaftConfigKeys.Rpc.setType(p, SupportedRpcType.NETTY);
        NettyConfigKeys.Server.setHost(p, self.host);
        NettyConfigKeys.Server.setPort(p, self.raftPort);
        RaftServerConfigKeys.setStorageDir(p, java.util.Collections.singletonList(storage.toFile()));
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(60, TimeUnit.SECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(120, TimeUnit.SECONDS));
        RaftServer s = RaftServer.newBuilder()
                .setServerId(RaftPeerId.valueOf("m2"))
                .setGroup(RaftGroup.valueOf(RatisStateLog.GROUP_ID, peers))
                .setProperties(p)
                .setStateMachine(new BaseStateMachine())
                .setOption(RaftStorage.StartupOption.RECOVER)
                .build();
        s.start();
        return s;
    }
}
