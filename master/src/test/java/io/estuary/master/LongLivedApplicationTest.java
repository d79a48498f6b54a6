package io.estuary.master;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.protocol.ApplicationHeartbeatRequest;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.RegisterWorkerRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.UnregisterShuffleRequest;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerHeartbeatRequest;
import io.estuary.common.protocol.WorkerHeartbeatResponse;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.util.ShuffleKey;
import io.estuary.network.auth.Credentials;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.MasterClient;
import io.estuary.testing.ClusterSecrets;
import io.estuary.testing.ManualClock;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A long-lived application (a notebook, a streaming job) runs shuffle after shuffle: what the masters remember of
 * it must stay bounded, and bounding it must never leave data on workers that nobody deletes.
 */
class LongLivedApplicationTest {
    @TempDir
    Path tmp;

    /**
     * A master's configuration with authentication on, proving {@link #secret}; permissive: the tests register
     * applications implicitly, acting for them as the cluster.
     */
    private EstuaryConf authenticated(EstuaryConf conf) {
        return ClusterSecrets.enable(conf, secret()).set(AuthConfig.MODE, "permissive");
    }

    private Path secretFile;

    private Path secret() {
        if (secretFile == null) secretFile = ClusterSecrets.newFile(tmp);
        return secretFile;
    }

    /** The test acts for the workers and the applications: it proves the cluster secret. */
    private TransportClientFactory clusterClients() {
        return new TransportClientFactory(
                new EstuaryConf(), "test", Credentials.cluster(ClusterSecrets.read(secret())));
    }

    private static final WorkerInfo WORKER = WorkerInfo.newBuilder()
            .setAddress(WorkerAddress.newBuilder()
                    .setHost("127.0.0.9")
                    .setRpcPort(1)
                    .setPushPort(2)
                    .setFetchPort(3))
            .addDisks(DiskInfo.newBuilder().setMountPoint("/d1"))
            .build();

    private static Request.Builder slots(String app, int shuffle) {
        return Request.newBuilder()
                .setRequestSlots(RequestSlotsRequest.newBuilder()
                        .setAppId(app)
                        .setShuffleId(shuffle)
                        .setNumPartitions(4));
    }

    private static Request.Builder unregister(String app, int shuffle) {
        return Request.newBuilder()
                .setUnregisterShuffle(
                        UnregisterShuffleRequest.newBuilder().setAppId(app).setShuffleId(shuffle));
    }

    private static Request.Builder registerWorker() {
        return Request.newBuilder()
                .setRegisterWorker(RegisterWorkerRequest.newBuilder().setWorker(WORKER));
    }

    @Test
    void tenThousandShufflesThroughOneApplicationKeepTheStateBounded() throws Exception {
        EstuaryConf conf = authenticated(new EstuaryConf())
                .set(MasterConfig.PORT, "0")
                .set(MasterConfig.HTTP_PORT, "0")
                .set(MasterConfig.HOST, "127.0.0.1")
                // The fake worker registers once and never beats: it must outlive 20,000 requests on a slow machine.
                .set(MasterConfig.WORKER_TIMEOUT, "1h");
        try (Master m = new Master(conf, () -> {});
                TransportClientFactory clients = clusterClients()) {
            MasterClient c = new MasterClient(clients, List.of(m.endpoint()));
            c.ask(registerWorker(), Empty.parser(), 30_000);
            int afterThousand = 0;
            for (int s = 0; s < 10_000; s++) {
                c.ask(slots("notebook", s), RequestSlotsResponse.parser(), 30_000);
                c.ask(unregister("notebook", s), Empty.parser(), 30_000);
                if (s == 999) afterThousand = m.log().stateMachine().snapshot().getSerializedSize();
            }
            int afterTenThousand = m.log().stateMachine().snapshot().getSerializedSize();
            int remembered = m.state(st -> st.unregisteredShuffleCount());
            System.out.printf(
                    "LONG-LIVED: snapshot %d bytes after 1,000 shuffles, %d after 10,000; %d entries of unregistered ids "
                            + "remembered%n",
                    afterThousand, afterTenThousand, remembered);
            assertTrue(remembered <= 1_000, remembered + " unregistered shuffle ids remembered");
            assertTrue(
                    afterTenThousand <= afterThousand + 1_000,
                    "the snapshot grew from " + afterThousand + " to " + afterTenThousand + " bytes");
            assertTrue((boolean) m.state(st -> st.shuffles("notebook").isEmpty()));
            // The newest unregistered shuffles are still expired on workers at once.
            WorkerHeartbeatResponse r = c.ask(
                    Request.newBuilder()
                            .setWorkerHeartbeat(WorkerHeartbeatRequest.newBuilder()
                                    .setWorker(WORKER)
                                    .addShuffleKeys(ShuffleKey.of("notebook", 9_999))),
                    WorkerHeartbeatResponse.parser(),
                    30_000);
            assertEquals(List.of(ShuffleKey.of("notebook", 9_999)), r.getExpiredShuffleKeysList());
        }
    }

    /**
     * With replicated masters, a shuffle whose unregistration or whose application's removal the masters no longer
     * remember (the records are bounded) is still deleted from workers: once reported unknown for an application
     * timeout. A live shuffle never is.
     */
    @Test
    void forgottenShufflesStillExpireOnWorkersWithReplicatedMasters() throws Exception {
        // The masters read a clock the test moves: "not before a whole application timeout" is then measured on it,
        // however fast or slow this machine runs.
        ManualClock clock = new ManualClock();
        try (MasterGroup g = new MasterGroup(c -> c.set(MasterConfig.APPLICATION_TIMEOUT, "3s"), clock)) {
            g.awaitLeader();
            MasterClient c = g.client();
            c.ask(registerWorker(), Empty.parser(), 30_000);
            c.ask(slots("app-live", 1), RequestSlotsResponse.parser(), 30_000);
            String live = ShuffleKey.of("app-live", 1);
            String forgottenShuffle = ShuffleKey.of("app-live", 500); // as an unregistration dropped from the record
            String forgottenApp = ShuffleKey.of("app-long-gone", 0); // as a removal dropped from the record
            Set<String> expired = new HashSet<>();
            long t0 = clock.millis();
            long expiredAt = -1;
            // Each step moves the clock by less than the timeout and heartbeats the live application and the worker.
            // A new leader starts its unknown shuffles afresh, so the bound is steps, not a time: generous.
            for (int step = 0; step < 400 && expiredAt < 0; step++) {
                if (step > 0) clock.advanceMillis(250);
                c.ask(
                        Request.newBuilder()
                                .setApplicationHeartbeat(
                                        ApplicationHeartbeatRequest.newBuilder().setAppId("app-live")),
                        Empty.parser(),
                        30_000);
                WorkerHeartbeatResponse r = c.ask(
                        Request.newBuilder()
                                .setWorkerHeartbeat(WorkerHeartbeatRequest.newBuilder()
                                        .setWorker(WORKER)
                                        .addAllShuffleKeys(Arrays.asList(live, forgottenShuffle, forgottenApp))),
                        WorkerHeartbeatResponse.parser(),
                        30_000);
                expired.addAll(r.getExpiredShuffleKeysList());
                assertFalse(expired.contains(live), "a live shuffle was expired");
                if (expired.contains(forgottenShuffle) && expired.contains(forgottenApp)) {
                    expiredAt = clock.millis();
                }
            }
            assertTrue(expiredAt >= 0, "the forgotten shuffles expire; expired so far: " + expired);
            assertTrue(expiredAt - t0 >= 3_000, "expired before a whole application timeout: " + (expiredAt - t0));
            assertFalse(expired.contains(live));
        }
    }

    /**
     * A worker away while its application unregistered more than the bound of 1,000 remembered entries comes back
     * holding the oldest of those shuffles: each is expired at its first heartbeat, with a single master (which keeps
     * a live application's unknown shuffles) as with three, and a shuffle still live among them never is.
     */
    @Test
    void aWorkerBackFromAwayLearnsEveryUnregisteredShuffleIsGoneWithOneMaster() throws Exception {
        EstuaryConf conf = authenticated(new EstuaryConf())
                .set(MasterConfig.PORT, "0")
                .set(MasterConfig.HTTP_PORT, "0")
                .set(MasterConfig.HOST, "127.0.0.1")
                // The worker is away (no heartbeat) for thousands of requests: it must not be declared lost meanwhile.
                .set(MasterConfig.WORKER_TIMEOUT, "1h");
        try (Master m = new Master(conf, () -> {});
                TransportClientFactory clients = clusterClients()) {
            MasterClient c = new MasterClient(clients, List.of(m.endpoint()));
            workerComesBackAfterManyUnregistrations(c, 2_500);
            int remembered = m.state(st -> st.unregisteredShuffleCount());
            assertTrue(remembered <= 1_000, remembered + " entries remembered of unregistered shuffles");
        }
    }

    @Test
    void aWorkerBackFromAwayLearnsEveryUnregisteredShuffleIsGoneWithThreeMasters() throws Exception {
        // The worker is away (no heartbeat) for thousands of requests: it must not be declared lost meanwhile.
        try (MasterGroup g = new MasterGroup(c -> c.set(MasterConfig.WORKER_TIMEOUT, "1h"))) {
            g.awaitLeader();
            workerComesBackAfterManyUnregistrations(g.client(), 1_100);
        }
    }

    /**
     * Shuffles 0 .. {@code shuffles - 1} are placed while the worker holds them; all but 0 and 700 (still live) are
     * unregistered while the worker is away (it sends no heartbeat). Back, it reports every one.
     */
    private static void workerComesBackAfterManyUnregistrations(MasterClient c, int shuffles) throws Exception {
        c.ask(registerWorker(), Empty.parser(), 30_000);
        Set<Integer> live = Set.of(0, 700);
        for (int s = 0; s < shuffles; s++) c.ask(slots("notebook", s), RequestSlotsResponse.parser(), 30_000);
        for (int s = 0; s < shuffles; s++) {
            if (!live.contains(s)) c.ask(unregister("notebook", s), Empty.parser(), 30_000);
        }
        WorkerHeartbeatRequest.Builder back =
                WorkerHeartbeatRequest.newBuilder().setWorker(WORKER);
        for (int s = 0; s < shuffles; s++) back.addShuffleKeys(ShuffleKey.of("notebook", s));
        WorkerHeartbeatResponse r =
                c.ask(Request.newBuilder().setWorkerHeartbeat(back), WorkerHeartbeatResponse.parser(), 30_000);
        Set<String> expired = new HashSet<>(r.getExpiredShuffleKeysList());
        int kept = 0;
        for (int s = 0; s < shuffles; s++) {
            boolean gone = expired.contains(ShuffleKey.of("notebook", s));
            if (live.contains(s)) assertFalse(gone, "live shuffle " + s + " was expired");
            else if (!gone) kept++;
        }
        System.out.printf(
                "WORKER-BACK: %d of %d unregistered shuffles expired at the first heartbeat, %d kept%n",
                expired.size(), shuffles - live.size(), kept);
        assertEquals(0, kept, kept + " unregistered shuffles kept on the worker, the oldest first");
    }
}
