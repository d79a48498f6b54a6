package io.estuary.master;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.protocol.ApplicationHeartbeatRequest;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.RegisterWorkerRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import io.estuary.network.rpc.MasterClient;
import io.estuary.server.admin.AdminJson;
import io.estuary.server.admin.AdminViews;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Three real masters forming a Ratis group on loopback ports ({@link MasterGroup}). */
class RaftMastersTest {
    private MasterGroup group;
    private Master[] masters;
    private List<String> rpcEndpoints;
    private Path dir;
    private TransportClientFactory clients;

    /** What the tests change in every master's configuration; a subclass may add to it. */
    EstuaryConf tune(EstuaryConf conf) {
        // Authentication off here; AuthenticatedRaftMastersTest runs every test with it on.
        return conf.set(io.estuary.common.config.AuthConfig.ENABLED, "false")
                .set(MasterConfig.HA_SNAPSHOT_THRESHOLD, "20");
    }

    /** The configuration of master {@code i}. */
    private EstuaryConf conf(int i) {
        return group.conf(i);
    }

    /** The tests' connections: anonymous, or the cluster's when the masters authenticate (tests act for workers). */
    private static TransportClientFactory testClients(EstuaryConf masterConf) {
        byte[] secret = io.estuary.server.auth.ClusterSecret.bytesOf(masterConf);
        return secret == null
                ? new TransportClientFactory(new EstuaryConf(), "test")
                : new TransportClientFactory(
                        new EstuaryConf(), "test", io.estuary.network.auth.Credentials.cluster(secret));
    }

    private Master start(int i) throws IOException {
        return group.start(i);
    }

    @BeforeEach
    void startGroup() throws Exception {
        group = new MasterGroup(this::tune);
        masters = group.masters;
        rpcEndpoints = group.rpcEndpoints;
        dir = group.dir();
        clients = testClients(conf(0));
    }

    @AfterEach
    void stopGroup() throws IOException {
        if (clients != null) clients.close();
        if (group != null) group.close();
    }

    private int awaitLeader() throws InterruptedException {
        return group.awaitLeader();
    }

    private MasterClient client() {
        return new MasterClient(clients, rpcEndpoints);
    }

    private static Request.Builder heartbeat(String app) {
        return Request.newBuilder()
                .setApplicationHeartbeat(
                        ApplicationHeartbeatRequest.newBuilder().setAppId(app));
    }

    private static Request.Builder registerWorker(int i) {
        return Request.newBuilder()
                .setRegisterWorker(RegisterWorkerRequest.newBuilder()
                        .setWorker(WorkerInfo.newBuilder()
                                .setAddress(WorkerAddress.newBuilder()
                                        .setHost("10.0.0." + i)
                                        .setRpcPort(1)
                                        .setPushPort(2)
                                        .setFetchPort(3))
                                .addDisks(DiskInfo.newBuilder().setMountPoint("/d1"))));
    }

    private static Request.Builder slots(String app, int shuffle, int partitions) {
        return Request.newBuilder()
                .setRequestSlots(RequestSlotsRequest.newBuilder()
                        .setAppId(app)
                        .setShuffleId(shuffle)
                        .setNumPartitions(partitions));
    }

    private byte[] state(int i) {
        return masters[i].log().stateMachine().snapshot().toByteArray();
    }

    @Test
    void followersRedirectToTheLeaderAndTheStateSurvivesItsLoss() throws Exception {
        int leader = awaitLeader();
        int follower = (leader + 1) % 3;
        // A follower learns who leads from the leader's first append after the election: wait for it (a loaded machine
        // may ask before it came, and the follower then rightly names no leader).
        io.estuary.testing.Waits.waitFor(
                () -> rpcEndpoints.get(leader).equals(masters[follower].log().leaderEndpoint()),
                30_000,
                "the follower knows the leader");
        // A follower refuses, naming the leader.
        RemoteException e = assertThrows(
                RemoteException.class,
                () -> ControlClient.ask(
                        clients.client("127.0.0.1", masters[follower].port()), heartbeat("app-x"), Empty.parser()));
        assertEquals(io.estuary.common.status.StatusCode.NOT_LEADER, e.status(), e.getMessage());
        assertTrue(e.getMessage().contains(rpcEndpoints.get(leader)), e.getMessage());

        // A client that starts at the follower is redirected and succeeds.
        MasterClient c = new MasterClient(clients, Arrays.asList(rpcEndpoints.get(follower), rpcEndpoints.get(leader)));
        for (int w = 0; w < 3; w++) c.ask(registerWorker(w), Empty.parser(), 30_000);
        List<List<io.estuary.common.protocol.PartitionLocation>> before = new ArrayList<>();
        for (int s = 0; s < 5; s++)
            before.add(c.ask(slots("app-1", s, 7), RequestSlotsResponse.parser(), 30_000)
                    .getLocationsList());
        assertEquals(rpcEndpoints.get(leader), c.current());

        // Every master applies the same log.
        byte[] leaderState = state(leader);
        waitFor(
                () -> Arrays.equals(leaderState, state(follower))
                        && Arrays.equals(leaderState, state((leader + 2) % 3)),
                "followers apply the same changes");

        // The leader crashes: another is elected, with the same state, and answers the same slots for old shuffles.
        masters[leader].halt();
        masters[leader] = null;
        int next = awaitLeader();
        assertNotEquals(leader, next);
        assertArrayEquals(leaderState, state(next));
        MasterClient c2 = client();
        for (int s = 0; s < 5; s++) {
            assertEquals(
                    before.get(s),
                    c2.ask(slots("app-1", s, 7), RequestSlotsResponse.parser(), 30_000)
                            .getLocationsList(),
                    "shuffle " + s + " must keep its slots across a leader change");
        }
        assertEquals(
                7,
                c2.ask(slots("app-1", 99, 7), RequestSlotsResponse.parser(), 30_000)
                        .getLocationsCount());
    }

    @Test
    void aWipedMasterRejoinsFromASnapshot() throws Exception {
        int leader = awaitLeader();
        MasterClient c = client();
        for (int w = 0; w < 3; w++) c.ask(registerWorker(w), Empty.parser(), 30_000);
        int victim = (leader + 1) % 3;
        masters[victim].close();
        masters[victim] = null;
        // Enough changes that the others snapshot (threshold 20) and purge their logs.
        for (int a = 0; a < 40; a++) c.ask(slots("app-" + a, 0, 3), RequestSlotsResponse.parser(), 30_000);
        File victimDir = new File(dir.toFile(), "m" + victim);
        try (Stream<Path> s = Files.walk(victimDir.toPath())) {
            s.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        }
        assertFalse(victimDir.exists());
        masters[victim] = start(victim);
        int lead = awaitLeader();
        byte[] expected = state(lead);
        waitFor(() -> Arrays.equals(expected, state(victim)), "the wiped master catches up");
        assertTrue((boolean) masters[victim].log().stateMachine().read(s -> s.hasApplication("app-39")));
    }

    @Test
    void twoMastersDownStopsChangesUntilOneReturns() throws Exception {
        int leader = awaitLeader();
        MasterClient c = client();
        c.ask(heartbeat("app-q"), Empty.parser(), 30_000);
        int a = (leader + 1) % 3;
        int b = (leader + 2) % 3;
        masters[a].close();
        masters[a] = null;
        masters[b].close();
        masters[b] = null;
        // No quorum: a change cannot commit, and the caller gets a clear error after its bounded wait.
        RemoteException e =
                assertThrows(RemoteException.class, () -> c.ask(heartbeat("app-new"), Empty.parser(), 3_000));
        assertNotNull(e.getMessage());
        // One master back: the group has a quorum again and the change goes through.
        masters[a] = start(a);
        c.ask(heartbeat("app-new"), Empty.parser(), 60_000);
        int lead = awaitLeader();
        assertTrue((boolean) masters[lead].log().stateMachine().read(s -> s.hasApplication("app-new")));
    }

    private String http(String method, int port, String path) throws IOException {
        java.net.HttpURLConnection c =
                (java.net.HttpURLConnection) new java.net.URL("http://127.0.0.1:" + port + path).openConnection();
        c.setRequestMethod(method);
        // With authentication on, the admin calls carry the token, as bin/estuary sends it.
        EstuaryConf conf = conf(0);
        if (conf.get(io.estuary.common.config.AuthConfig.ENABLED)) {
            c.setRequestProperty(
                    "Authorization",
                    "Bearer "
                            + io.estuary.server.admin.AdminToken.fromConf(conf).value());
        }
        int code = c.getResponseCode();
        try (java.io.InputStream in = code < 400 ? c.getInputStream() : c.getErrorStream()) {
            return code + " " + new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    /** GET /api/status of a master, which must answer 200. */
    private AdminViews.MasterStatus status(int port) throws IOException {
        String answer = http("GET", port, "/api/status");
        assertTrue(answer.startsWith("200 "), answer);
        return AdminJson.read(answer.substring("200 ".length()), AdminViews.MasterStatus.class);
    }

    @Test
    void adminEndpointReportsTransfersLeadershipAndExportsMetrics() throws Exception {
        int leader = awaitLeader();
        client().ask(registerWorker(1), Empty.parser(), 30_000);
        client().ask(slots("app-admin", 3, 4), RequestSlotsResponse.parser(), 30_000);
        AdminViews.MasterStatus status = status(masters[leader].httpPort());
        assertEquals("leader", status.role());
        assertEquals(rpcEndpoints.get(leader), status.leader());
        assertEquals("app-admin", status.applications().get(0).id());
        assertEquals(3, status.applications().get(0).shuffles().get(0).id());
        assertEquals(4, status.applications().get(0).shuffles().get(0).partitions());
        assertTrue(status.workers().stream().anyMatch(w -> w.host().equals("10.0.0.1")), status.toString());
        int follower = (leader + 1) % 3;
        assertEquals("follower", status(masters[follower].httpPort()).role());

        String metrics = http("GET", masters[leader].httpPort(), "/metrics");
        assertTrue(metrics.contains("estuary_master_is_leader 1.0"), metrics);
        assertTrue(metrics.contains("estuary_master_slot_requests_total 1.0"), metrics);
        assertTrue(metrics.contains("estuary_master_workers{state=\"available\",} 1.0"), metrics);
        assertTrue(http("GET", masters[follower].httpPort(), "/metrics").contains("estuary_master_is_leader 0.0"));

        assertTrue(
                http("POST", masters[follower].httpPort(), "/api/leadership/transfer?to=m" + follower)
                        .startsWith("421 "),
                "only the leader can hand over");
        String moved = http("POST", masters[leader].httpPort(), "/api/leadership/transfer?to=m" + follower);
        assertTrue(moved.startsWith("200 "), moved);
        waitFor(() -> masters[follower].isLeader(), "m" + follower + " leads");
        assertTrue(http("GET", masters[leader].httpPort(), "/nope").startsWith("404 "));

        // An operator excludes a worker on the (new) leader: replicated, and it gets no new slots.
        client().ask(registerWorker(2), Empty.parser(), 30_000);
        String w1 = "10.0.0.1:1:2:3";
        assertTrue(http("POST", masters[follower].httpPort(), "/api/workers/exclude?id=" + w1)
                .startsWith("200 "));
        for (io.estuary.common.protocol.PartitionLocation l : client().ask(
                        slots("app-admin", 4, 10), RequestSlotsResponse.parser(), 30_000)
                .getLocationsList()) {
            assertEquals("10.0.0.2", l.getWorker().getHost(), "an excluded worker got a slot");
        }
        byte[] st = state(follower);
        waitFor(() -> Arrays.equals(st, state(leader)), "the exclusion reaches every master");
        assertTrue(status(masters[leader].httpPort()).workers().stream()
                .anyMatch(w -> w.state().equals("EXCLUDED")));
        assertTrue(http("GET", masters[follower].httpPort(), "/metrics")
                .contains("estuary_master_workers{state=\"excluded\",} 1.0"));
        assertTrue(http("POST", masters[follower].httpPort(), "/api/workers/decommission?id=nope")
                .startsWith("404 "));
    }

    @Test
    void gracefulShutdownHandsLeadershipOverFirst() throws Exception {
        int leader = awaitLeader();
        long term = masters[leader].log().term();
        long t0 = System.nanoTime();
        masters[leader].close();
        masters[leader] = null;
        int next = awaitLeader();
        System.out.printf(
                "HANDOVER: m%d leads %d ms after m%d began a graceful shutdown%n",
                next, (System.nanoTime() - t0) / 1_000_000, leader);
        assertTrue(masters[next].log().term() > term);
    }

    @Test
    void aMasterStoppedFromAnInterruptedThreadReleasesItsStorageBeforeReturning() throws Exception {
        int leader = awaitLeader();
        int victim = (leader + 1) % 3;
        // Ratis' own close stops waiting for its threads when the caller is interrupted; the storage lock would then
        // outlive the stop, and the same master started again in this JVM fail with "already locked".
        Thread.currentThread().interrupt();
        try {
            masters[victim].halt();
        } finally {
            assertTrue(Thread.interrupted(), "the stop keeps the caller's interrupt");
        }
        assertStorageUnlocked(victim);
        masters[victim] = start(victim);
        client().ask(registerWorker(1), Empty.parser(), 30_000);
        waitFor(() -> Arrays.equals(state(leader), state(victim)), "the restarted master applies changes again");
    }

    @Test
    void aMasterWhoseRaftPortIsTakenReleasesItsStorageSoThatItStartsOnceThePortIsFree() throws Exception {
        int leader = awaitLeader();
        int victim = (leader + 1) % 3;
        masters[victim].halt();
        masters[victim] = null;
        int raftPort = group.raftPort(victim);
        // Ratis starts the division (which locks the storage) before it binds the port; when the bind fails, it
        // sets its server back to NEW, and closing a NEW server closes nothing.
        java.net.ServerSocket taken = new java.net.ServerSocket();
        waitFor(
                () -> {
                    try {
                        taken.bind(new java.net.InetSocketAddress("127.0.0.1", raftPort));
                        return true;
                    } catch (IOException stillBound) {
                        return false;
                    }
                },
                "the stopped master's Raft port is free again");
        try {
            assertThrows(IOException.class, () -> start(victim), "the Raft port is taken");
            assertStorageUnlocked(victim);
        } finally {
            taken.close();
        }
        masters[victim] = start(victim);
        client().ask(registerWorker(1), Empty.parser(), 30_000);
        waitFor(() -> Arrays.equals(state(leader), state(victim)), "the restarted master applies changes again");
    }

    /** Takes and drops the lock Ratis holds on master {@code i}'s storage: it fails while the lock is held. */
    private void assertStorageUnlocked(int i) throws IOException {
        List<Path> locks;
        try (Stream<Path> s = Files.walk(dir.resolve("m" + i))) {
            locks = s.filter(p -> p.getFileName().toString().equals("in_use.lock"))
                    .collect(java.util.stream.Collectors.toList());
        }
        for (Path lock : locks) {
            try (java.nio.channels.FileChannel ch =
                            java.nio.channels.FileChannel.open(lock, java.nio.file.StandardOpenOption.WRITE);
                    java.nio.channels.FileLock l = ch.tryLock()) {
                assertNotNull(l, "the storage of m" + i + " is still locked: " + lock);
            } catch (java.nio.channels.OverlappingFileLockException e) {
                fail("the storage of m" + i + " is still locked in this JVM once its master stopped: " + lock);
            }
        }
    }

    @Test
    void aMasterThatLosesItsRaftServerGivesUp() throws Exception {
        awaitLeader();
        int victim = 0;
        masters[victim].halt();
        java.util.concurrent.CountDownLatch fatal = new java.util.concurrent.CountDownLatch(1);
        masters[victim] = new Master(conf(victim), fatal::countDown);
        ((io.estuary.master.state.RatisStateLog) masters[victim].log()).stopRaftServerOnly();
        assertTrue(
                fatal.await(60, java.util.concurrent.TimeUnit.SECONDS),
                "the master must notice that Raft stopped and give up (in production: exit)");
    }

    @Test
    void aMasterRestartedAfterItsOwnSnapshotAndLogPurgeRejoinsWithTheSameState() throws Exception {
        int leader = awaitLeader();
        MasterClient c = client();
        for (int w = 0; w < 3; w++) c.ask(registerWorker(w), Empty.parser(), 30_000);
        for (int a = 0; a < 60; a++) c.ask(slots("app-" + a, 0, 2), RequestSlotsResponse.parser(), 30_000);
        int victim = (leader + 1) % 3;
        byte[] before = state(leader);
        waitFor(() -> Arrays.equals(before, state(victim)), "the victim has applied everything");
        File sm = new File(dir.toFile(), "m" + victim);
        masters[victim].halt();
        masters[victim] = null;
        long snapshots;
        try (Stream<Path> s = Files.walk(sm.toPath())) {
            snapshots = s.filter(p -> p.getFileName().toString().startsWith("snapshot.")
                            && !p.toString().endsWith(".md5"))
                    .count();
        }
        assertTrue(snapshots > 0, "the victim took snapshots (threshold 20) before it stopped");
        for (int a = 60; a < 70; a++) c.ask(slots("app-" + a, 0, 2), RequestSlotsResponse.parser(), 30_000);
        masters[victim] = start(victim);
        int lead = awaitLeader();
        byte[] expected = state(lead);
        waitFor(() -> Arrays.equals(expected, state(victim)), "the restarted master has the same state");
    }
}
