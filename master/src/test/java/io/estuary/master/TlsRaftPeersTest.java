package io.estuary.master;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.ConfigException;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.config.TlsConfig;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.RegisterWorkerRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.master.state.RatisStateLog;
import io.estuary.master.state.raft.RaftRefusalLog;
import io.estuary.network.rpc.MasterClient;
import io.estuary.testing.TestCertificates;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three real masters with authentication (permissive, as during and after an upgrade) and mutual TLS on the
 * {@code internal} group, which covers their Raft ports: they elect and commit over TLS, a follower that was away
 * catches up, and peers that cannot do TLS with the group's CA are refused (a master without TLS, a master whose
 * certificate another CA signed, bytes in the clear) while the group keeps committing. And a master with TLS but
 * without authentication (whose Raft transport has no TLS) refuses to start rather than run Raft in the clear.
 */
class TlsRaftPeersTest {
    private static final TlsConfig.Group G = TlsConfig.Group.INTERNAL;

    @TempDir
    static Path certs;

    @TempDir
    Path tmp;

    private static TestCertificates ca;
    private static TestCertificates otherCa;
    private static TestCertificates.Issued node;
    private static TestCertificates.Issued stranger;

    /** How master m{i} is started, when not with the cluster's certificate: "plain" or "stranger". */
    private final Map<String, String> variantOf = new ConcurrentHashMap<>();

    private MasterGroup group;

    @BeforeAll
    static void certificates() throws IOException {
        ca = TestCertificates.authority(certs, "estuary");
        otherCa = TestCertificates.authority(certs, "other");
        node = ca.issue("node");
        stranger = otherCa.issue("stranger");
    }

    @BeforeEach
    void start() throws Exception {
        // No estuary.auth.* here: MasterGroup turns authentication on, permissive, with its cluster secret.
        group = new MasterGroup(conf -> {
            String variant = variantOf.get(conf.get(MasterConfig.HA_ID));
            if ("plain".equals(variant)) return conf;
            if ("stranger".equals(variant)) return otherCa.configure(conf, stranger, true, G);
            return ca.configure(conf, node, true, G);
        });
    }

    @AfterEach
    void stop() throws IOException {
        if (group != null) group.close();
    }

    private MasterClient client() {
        return group.clusterClient(
                io.estuary.testing.ClusterSecrets.read(group.secretFile()),
                ca.configure(new EstuaryConf(), node, true, G));
    }

    private long refused(int i) {
        return ((RatisStateLog) group.masters[i].log()).raftAuthenticationFailures();
    }

    private byte[] state(int i) {
        return group.masters[i].log().stateMachine().snapshot().toByteArray();
    }

    /** Halts master {@code i} and starts it again as {@code variant}, once it opened its Raft storage. */
    private void restart(int i, String variant) throws Exception {
        group.masters[i].halt();
        group.masters[i] = null;
        if (variant == null) {
            variantOf.remove("m" + i);
        } else {
            variantOf.put("m" + i, variant);
        }
        group.masters[i] = group.start(i);
        waitFor(() -> group.masters[i].log().term() > 0, 60_000, "master " + i + " read its Raft storage back");
    }

    @Test
    void mastersElectCommitAndCatchUpOverTlsAndRefuseWhoCannotSpeakIt() throws Exception {
        int leader = group.awaitLeader();
        MasterClient c = client();
        for (int w = 0; w < 3; w++) c.ask(registerWorker(w), Empty.parser(), 30_000);
        byte[] first = state(leader);
        for (int i = 0; i < 3; i++) {
            int m = i;
            waitFor(() -> Arrays.equals(first, state(m)), 60_000, "master " + m + " applies the changes over TLS");
        }

        // A master back without TLS (same cluster secret): the others' TLS ports refuse it, saying why; it gets
        // nothing new.
        int odd = (leader + 1) % 3;
        RaftRefusalLog log = RaftRefusalLog.attach();
        try {
            restart(odd, "plain");
            long before = refusedByOthers(odd);
            waitFor(() -> refusedByOthers(odd) > before, 60_000, "the TLS masters refuse the plain one");
            waitFor(
                    () -> log.has("WARN", "sent plain bytes on this TLS Raft port")
                            && log.has("WARN", "opened with TLS, and this Raft port has none"),
                    60_000,
                    "both sides name the TLS mismatch");
        } finally {
            log.close();
        }
        for (int w = 3; w < 5; w++) c.ask(registerWorker(w), Empty.parser(), 30_000);
        byte[] second = state(group.awaitLeader());
        assertFalse(Arrays.equals(second, state(odd)), "a master without TLS must not receive the new entries");
        assertFalse(group.masters[odd].isLeader());

        // Back with a certificate another CA signed (mutual TLS): refused both ways.
        restart(odd, "stranger");
        long others = refusedByOthers(odd);
        waitFor(
                () -> refused(odd) > 0 && refusedByOthers(odd) > others,
                60_000,
                "the untrusted master and the others refuse each other");
        c.ask(registerWorker(5), Empty.parser(), 30_000);
        int lead = group.awaitLeader();
        assertNotEquals(odd, lead);
        byte[] third = state(lead);
        assertFalse(Arrays.equals(third, state(odd)), "an untrusted master must not receive the new entries");

        // Back with the cluster's certificate: it rejoins over TLS and catches up.
        restart(odd, null);
        waitFor(() -> Arrays.equals(third, state(odd)), 60_000, "the master with a trusted certificate catches up");
    }

    @Test
    void bytesInTheClearOnTheTlsRaftPortAreRefused() throws Exception {
        int leader = group.awaitLeader();
        long before = refused(leader);
        try (Socket s = new Socket("127.0.0.1", group.raftPort(leader))) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write("EST1 a plain Raft peer's hello, not a TLS record".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            byte[] buf = new byte[256];
            int total = 0;
            for (int n; (n = in.read(buf)) > 0; ) total += n; // at most a TLS alert; then closed
            assertTrue(total < 256, "no answer beyond a TLS alert");
        }
        waitFor(() -> refused(leader) > before, 30_000, "the leader counts the plain peer as refused");
        // The group keeps working.
        client().ask(registerWorker(0), Empty.parser(), 30_000);
    }

    @Test
    void aMasterWithTlsButWithoutAuthenticationRefusesToStart() {
        EstuaryConf conf = ca.configure(new EstuaryConf(), node, true, G)
                .set(AuthConfig.ENABLED, "false")
                .set(MasterConfig.HA_NODES, "m0=127.0.0.1:1:2,m1=127.0.0.1:3:4,m2=127.0.0.1:5:6")
                .set(MasterConfig.HA_ID, "m0")
                .set(MasterConfig.HA_DIR, tmp.toString())
                .set(MasterConfig.HTTP_PORT, "0");
        ConfigException e = assertThrows(ConfigException.class, () -> new Master(conf, () -> {}));
        assertTrue(e.getMessage().contains("estuary.auth.enabled=true"), e.getMessage());
        assertTrue(e.getMessage().contains("estuary.tls.internal.enabled"), e.getMessage());
    }

    private long refusedByOthers(int i) {
        long n = 0;
        for (int m = 0; m < 3; m++) if (m != i) n += refused(m);
        return n;
    }

    private static Request.Builder registerWorker(int i) {
        return Request.newBuilder()
                .setRegisterWorker(RegisterWorkerRequest.newBuilder()
                        .setWorker(WorkerInfo.newBuilder()
                                .setAddress(WorkerAddress.newBuilder()
                                        .setHost("10.0.2." + i)
                                        .setRpcPort(1)
                                        .setPushPort(2)
                                        .setFetchPort(3))
                                .addDisks(DiskInfo.newBuilder().setMountPoint("/d1"))));
    }
}
