package io.estuary.master;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.RegisterWorkerRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.master.state.RatisStateLog;
import io.estuary.master.state.raft.RaftRefusalLog;
import io.estuary.master.state.raft.RaftSecretFiles;
import io.estuary.network.rpc.MasterClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.netty.NettyRpcProxy;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.RaftGroupIdProto;
import org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerRequestProto;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three real masters with authentication on their Raft ports, and peers without the cluster secret: a master started
 * with another secret, a Ratis peer that does not authenticate (forging a leader's append), garbage. Each is refused
 * and logged at WARN; the group keeps electing and committing.
 */
class RaftPeerAuthenticationTest {
    /** RatisStateLog's group id: a forger knows it (it is no secret). */
    private static final RaftGroupId GROUP_ID =
            RaftGroupId.valueOf(UUID.fromString("6e0e3c1a-5e57-4a7a-9d0b-e57ae2a0e001"));

    @TempDir
    Path tmp;

    private final Map<String, Path> secretOf = new ConcurrentHashMap<>();
    private Path goodSecret;
    private MasterGroup group;
    private RaftRefusalLog warnings;

    @BeforeEach
    void start() throws Exception {
        goodSecret = RaftSecretFiles.write(tmp.resolve("cluster.secret"), RaftSecretFiles.random());
        warnings = RaftRefusalLog.attach();
        group = new MasterGroup(conf -> conf.set(AuthConfig.ENABLED, "true")
                .set(
                        AuthConfig.CLUSTER_SECRET_FILE,
                        secretOf.getOrDefault(conf.get(MasterConfig.HA_ID), goodSecret)
                                .toString()));
    }

    @AfterEach
    void stop() throws IOException {
        if (warnings != null) warnings.close();
        if (group != null) group.close();
    }

    private long refused(int i) {
        return ((RatisStateLog) group.masters[i].log()).raftAuthenticationFailures();
    }

    private byte[] state(int i) {
        return group.masters[i].log().stateMachine().snapshot().toByteArray();
    }

    @Test
    void aMasterWithAnotherSecretCannotJoinVoteOrAppendAndTheGroupKeepsWorking() throws Exception {
        int leader = group.awaitLeader();
        MasterClient c = group.clusterClient(
                io.estuary.server.auth.ClusterSecret.read(goodSecret).bytes());
        for (int w = 0; w < 3; w++) c.ask(registerWorker(w), Empty.parser(), 30_000);

        // One master comes back with a secret of its own: an impostor at the same address and id.
        int impostor = (leader + 1) % 3;
        int other = (leader + 2) % 3;
        group.masters[impostor].halt();
        secretOf.put("m" + impostor, RaftSecretFiles.write(tmp.resolve("other.secret"), RaftSecretFiles.random()));
        group.masters[impostor] = group.start(impostor);

        // The leader's appends to it and its own vote requests both fail the handshake, on both sides.
        waitFor(
                () -> refused(impostor) > 0 && refused(leader) + refused(other) > 0,
                60_000,
                "the impostor and the others refuse each other");
        assertTrue(
                warnings.has("WARN", "Refused a connection to the Raft port from"),
                "each refusal is logged at WARN with the peer's address");

        // The two good masters still commit: the impostor never gets those changes, nor leads.
        for (int w = 3; w < 6; w++) c.ask(registerWorker(w), Empty.parser(), 30_000);
        int lead = group.awaitLeader();
        assertNotEquals(impostor, lead);
        byte[] committed = state(lead);
        assertFalse(Arrays.equals(committed, state(impostor)), "the impostor must not have received the new entries");
        assertFalse(group.masters[impostor].isLeader());

        // Back with the cluster secret, it rejoins and catches up.
        group.masters[impostor].halt();
        secretOf.remove("m" + impostor);
        group.masters[impostor] = group.start(impostor);
        waitFor(() -> Arrays.equals(committed, state(impostor)), 60_000, "the master with the right secret catches up");
    }

    @Test
    void aPeerThatDoesNotAuthenticateCannotAppendAndGarbageIsClosed() throws Exception {
        int leader = group.awaitLeader();
        int follower = (leader + 1) % 3;
        MasterClient c = group.clusterClient(
                io.estuary.server.auth.ClusterSecret.read(goodSecret).bytes());
        c.ask(registerWorker(0), Empty.parser(), 30_000);
        long before = refused(follower);

        // A stock Ratis netty peer forges an append from the leader with a far higher term: had it been read, the
        // follower would have taken that term.
        RaftPeerId target = RaftPeerId.valueOf("m" + follower);
        try (NettyRpcProxy.PeerMap forger = new NettyRpcProxy.PeerMap("forger", new RaftProperties())) {
            forger.addRaftPeers(Collections.singletonList(RaftPeer.newBuilder()
                    .setId(target)
                    .setAddress("127.0.0.1:" + group.raftPort(follower))
                    .build()));
            RaftRpcRequestProto header = RaftRpcRequestProto.newBuilder()
                    .setRequestorId(ByteString.copyFromUtf8("m" + leader))
                    .setReplyId(target.toByteString())
                    .setRaftGroupId(RaftGroupIdProto.newBuilder().setId(GROUP_ID.toByteString()))
                    .setCallId(1)
                    .build();
            AppendEntriesRequestProto forged = AppendEntriesRequestProto.newBuilder()
                    .setServerRequest(header)
                    .setLeaderTerm(1_000_000)
                    .setLeaderCommit(0)
                    .build();
            assertThrows(
                    IOException.class,
                    () -> forger.getProxy(target)
                            .send(
                                    header,
                                    RaftNettyServerRequestProto.newBuilder()
                                            .setAppendEntriesRequest(forged)
                                            .build()));
        }
        waitFor(() -> refused(follower) > before, 30_000, "the follower counts the refused peer");
        assertTrue(group.masters[follower].log().term() < 1_000_000, "the forged term was never read");

        // Garbage on the Raft port: closed without an answer.
        try (Socket s = new Socket("127.0.0.1", group.raftPort(leader))) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write("GET / HTTP/1.1\r\nHost: estuary\r\n\r\n0123456789".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            assertEquals(-1, in.read(), "the master closes a connection that does not authenticate");
        }
        assertTrue(warnings.has("WARN", "did not open with the Raft authentication handshake"));

        // The group keeps working.
        c.ask(registerWorker(1), Empty.parser(), 30_000);
        int lead = group.awaitLeader();
        byte[] committed = state(lead);
        for (int i = 0; i < 3; i++) {
            int m = i;
            waitFor(() -> Arrays.equals(committed, state(m)), 60_000, "master " + m + " applies the change");
        }
    }

    private static Request.Builder registerWorker(int i) {
        return Request.newBuilder()
                .setRegisterWorker(RegisterWorkerRequest.newBuilder()
                        .setWorker(WorkerInfo.newBuilder()
                                .setAddress(WorkerAddress.newBuilder()
                                        .setHost("10.0.1." + i)
                                        .setRpcPort(1)
                                        .setPushPort(2)
                                        .setFetchPort(3))
                                .addDisks(DiskInfo.newBuilder().setMountPoint("/d1"))));
    }
}
