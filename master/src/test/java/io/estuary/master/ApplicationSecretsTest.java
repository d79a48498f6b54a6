package io.estuary.master;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import com.google.protobuf.ByteString;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.protocol.ApplicationHeartbeatRequest;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.GetApplicationSecretRequest;
import io.estuary.common.protocol.GetApplicationSecretResponse;
import io.estuary.common.protocol.GetRegistrationKeyRequest;
import io.estuary.common.protocol.GetRegistrationKeyResponse;
import io.estuary.common.protocol.RegisterApplicationRequest;
import io.estuary.common.protocol.RegisterWorkerRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.ReviveSlotsRequest;
import io.estuary.common.protocol.UnregisterApplicationRequest;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.security.ClusterKeys;
import io.estuary.common.security.RegistrationKeys;
import io.estuary.common.security.SecretBox;
import io.estuary.common.status.StatusCode;
import io.estuary.network.auth.Credentials;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import io.estuary.network.rpc.MasterClient;
import io.estuary.testing.ClusterSecrets;
import io.estuary.testing.ManualClock;
import io.estuary.testing.TestConfs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Registering application secrets with real masters on loopback: sealed registration, idempotence, refusals with
 * their status, the secret kept sealed in the Raft log and snapshots, dropped when the application ends or expires,
 * handed to servers only, and surviving a leader's death and a master's restart.
 */
class ApplicationSecretsTest {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final long WAIT = 30_000;

    private Path dir;
    private Path secretFile;
    private final List<AutoCloseable> open = new ArrayList<>();

    @BeforeEach
    void setUp() throws IOException {
        dir = Files.createTempDirectory("estuary-secrets");
        secretFile = ClusterSecrets.newFile(dir);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) open.get(i).close();
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(java.util.Comparator.reverseOrder())
                    .forEach(p -> p.toFile().delete());
        }
    }

    private <T extends AutoCloseable> T closing(T c) {
        open.add(c);
        return c;
    }

    private Master master(UnaryOperator<EstuaryConf> tune) throws IOException {
        return closing(new Master(tune.apply(ClusterSecrets.enable(TestConfs.master(), secretFile)), () -> {}));
    }

    /** As above, the master's liveness reading {@code clock} (a ManualClock the test drives). */
    private Master master(UnaryOperator<EstuaryConf> tune, io.estuary.common.time.Clock clock) throws IOException {
        return closing(new Master(tune.apply(ClusterSecrets.enable(TestConfs.master(), secretFile)), () -> {}, clock));
    }

    private MasterClient client(Master m, Credentials credentials) {
        TransportClientFactory f = closing(new TransportClientFactory(new EstuaryConf(), "test", credentials));
        return new MasterClient(f, List.of(m.endpoint()));
    }

    private static byte[] newSecret() {
        byte[] s = new byte[32];
        RANDOM.nextBytes(s);
        return s;
    }

    /** A registration of {@code secret} for {@code app}, sealed for the key the master gives now. */
    static RegisterApplicationRequest.Builder sealed(MasterClient c, String app, byte[] secret) throws Exception {
        GetRegistrationKeyResponse key = c.ask(
                Request.newBuilder().setGetRegistrationKey(GetRegistrationKeyRequest.getDefaultInstance()),
                GetRegistrationKeyResponse.parser(),
                WAIT);
        KeyPair mine = RegistrationKeys.generate();
        byte[] nonce = new byte[16];
        RANDOM.nextBytes(nonce);
        byte[] k = RegistrationKeys.sealingKey(
                mine.getPrivate(), key.getMasterPublicKey().toByteArray(), app, nonce);
        return RegisterApplicationRequest.newBuilder()
                .setAppId(app)
                .setClientPublicKey(ByteString.copyFrom(mine.getPublic().getEncoded()))
                .setNonce(ByteString.copyFrom(nonce))
                .setMasterPublicKey(key.getMasterPublicKey())
                .setSealedSecret(ByteString.copyFrom(SecretBox.seal(k, secret, app)))
                .setUser("tester");
    }

    static void register(MasterClient c, RegisterApplicationRequest.Builder r) throws RemoteException {
        c.ask(Request.newBuilder().setRegisterApplication(r), Empty.parser(), WAIT);
    }

    static void register(MasterClient c, String app, byte[] secret) throws Exception {
        register(c, sealed(c, app, secret));
    }

    private static StatusCode refusal(ThrowingRunnable r) {
        RemoteException e = assertThrows(RemoteException.class, r::run);
        return e.status();
    }

    private static RemoteException refused(ThrowingRunnable r) {
        return assertThrows(RemoteException.class, r::run);
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    private static void heartbeat(MasterClient c, String app) throws RemoteException {
        c.ask(
                Request.newBuilder()
                        .setApplicationHeartbeat(
                                ApplicationHeartbeatRequest.newBuilder().setAppId(app)),
                Empty.parser(),
                WAIT);
    }

    private static GetApplicationSecretResponse secretOf(MasterClient c, String app) throws RemoteException {
        return c.ask(
                Request.newBuilder()
                        .setGetApplicationSecret(
                                GetApplicationSecretRequest.newBuilder().setAppId(app)),
                GetApplicationSecretResponse.parser(),
                WAIT);
    }

    private byte[] opened(GetApplicationSecretResponse r, String app) throws Exception {
        return SecretBox.open(
                ClusterKeys.sealingKey(ClusterSecrets.read(secretFile)),
                r.getSealedSecret().toByteArray(),
                app);
    }

    @Test
    void registrationIsIdempotentAndRefusesAnotherSecretOrAnotherApplication() throws Exception {
        Master m = master(c -> c);
        MasterClient anonymous = client(m, Credentials.NONE);
        byte[] secret = newSecret();
        register(anonymous, "app-a", secret);
        register(anonymous, "app-a", secret); // a retry: the same answer
        RemoteException other = refused(() -> register(anonymous, "app-a", newSecret()));
        assertEquals(StatusCode.FORBIDDEN, other.status());
        assertTrue(other.getMessage().contains("another secret"), other.getMessage());

        // Proven as app-a, it may not register app-b.
        MasterClient asA = client(m, Credentials.application("app-a", secret));
        heartbeat(asA, "app-a");
        RemoteException forB = refused(() -> register(asA, "app-b", newSecret()));
        assertEquals(StatusCode.FORBIDDEN, forB.status());
        assertTrue(forB.getMessage().contains("app-b"), forB.getMessage());

        // The master still knows app-a's secret, and only that one.
        MasterClient asCluster = client(m, Credentials.cluster(ClusterSecrets.read(secretFile)));
        assertArrayEquals(secret, opened(secretOf(asCluster, "app-a"), "app-a"));
        assertTrue(secretOf(asCluster, "app-b").getSealedSecret().isEmpty());
    }

    /** RequestSlots, then ReviveSlots, for {@code app}'s shuffle 0 of 2 partitions. */
    private static List<RequestSlotsResponse> slots(MasterClient c, String app) throws RemoteException {
        RequestSlotsResponse placed = c.ask(
                Request.newBuilder()
                        .setRequestSlots(RequestSlotsRequest.newBuilder()
                                .setAppId(app)
                                .setShuffleId(0)
                                .setNumPartitions(2)),
                RequestSlotsResponse.parser(),
                WAIT);
        RequestSlotsResponse revived = c.ask(
                Request.newBuilder()
                        .setReviveSlots(ReviveSlotsRequest.newBuilder()
                                .setAppId(app)
                                .setShuffleId(0)
                                .addPartitionIds(1)),
                RequestSlotsResponse.parser(),
                WAIT);
        return List.of(placed, revived);
    }

    /**
     * Registering is open to anonymous connections and each one is a Raft entry: a host registering faster than its
     * rate is asked to retry later (naming the setting), the master keeps serving everyone else, and the host's
     * registration goes through once its bucket refills, within the driver's own wait.
     */
    @Test
    void aHostRegisteringFasterThanItsRateIsAskedToRetryLater() throws Exception {
        // One token every 10 s: the refusal below cannot meet a refilled bucket unless the machine stalls that long.
        Master m = master(c -> c.set(MasterConfig.REGISTRATION_RATE_PER_HOST, "0.1")
                .set(MasterConfig.REGISTRATION_BURST_PER_HOST, "2"));
        MasterClient anonymous = client(m, Credentials.NONE);
        register(anonymous, "app-1", newSecret());
        register(anonymous, "app-2", newSecret());
        RegisterApplicationRequest.Builder third = sealed(anonymous, "app-3", newSecret());
        RemoteException e =
                refused(() -> anonymous.ask(Request.newBuilder().setRegisterApplication(third), Empty.parser(), 300));
        assertEquals(StatusCode.RETRY_LATER, e.status(), e.getMessage());
        assertTrue(e.getMessage().contains(MasterConfig.REGISTRATION_RATE_PER_HOST.key()), e.getMessage());
        assertTrue(
                m.metrics().registry().getSampleValue("estuary_master_registrations_throttled_total") >= 1,
                "throttled registrations are counted");

        // The servers' requests are not throttled.
        MasterClient asCluster = client(m, Credentials.cluster(ClusterSecrets.read(secretFile)));
        heartbeat(asCluster, "app-1");

        // The driver's usual wait covers the refill (MasterClient backs off and retries RETRY_LATER).
        anonymous.ask(Request.newBuilder().setRegisterApplication(third), Empty.parser(), 60_000);
        heartbeat(asCluster, "app-3");
    }

    /**
     * A single master named alone in estuary.master.ha.nodes keeps its state on disk: restarted, it still knows the
     * applications' secrets (an application proves its secret, a server learns it), where a master without entries
     * forgets them.
     */
    @Test
    void aSingleMasterWithItsStateOnDiskKeepsSecretsAcrossARestart() throws Exception {
        int[] ports = io.estuary.testing.process.FreePorts.take(2);
        UnaryOperator<EstuaryConf> durable =
                c -> c.set(MasterConfig.HA_NODES, "m0=127.0.0.1:" + ports[0] + ":" + ports[1])
                        .set(MasterConfig.HA_ID, "m0")
                        .set(MasterConfig.HA_DIR, dir.resolve("raft").toString());
        Master m = master(durable);
        waitFor(m::isLeader, WAIT, "the single master leads");
        byte[] secret = newSecret();
        register(client(m, Credentials.NONE), "app-durable", secret);
        m.halt();

        Master back = master(durable);
        waitFor(back::isLeader, WAIT, "the restarted master leads");
        MasterClient asCluster = client(back, Credentials.cluster(ClusterSecrets.read(secretFile)));
        assertArrayEquals(secret, opened(secretOf(asCluster, "app-durable"), "app-durable"));
        heartbeat(client(back, Credentials.application("app-durable", secret)), "app-durable");
    }

    @Test
    void slotAnswersCarryTheSecretSealedForWorkersToTheApplicationOnly() throws Exception {
        Master m = master(c -> c);
        MasterClient anonymous = client(m, Credentials.NONE);
        byte[] secret = newSecret();
        register(anonymous, "app-r", secret);
        MasterClient asCluster = client(m, Credentials.cluster(ClusterSecrets.read(secretFile)));
        asCluster.ask(
                Request.newBuilder()
                        .setRegisterWorker(RegisterWorkerRequest.newBuilder()
                                .setWorker(WorkerInfo.newBuilder()
                                        .setAddress(WorkerAddress.newBuilder()
                                                .setHost("127.0.0.9")
                                                .setRpcPort(1)
                                                .setPushPort(2)
                                                .setFetchPort(3))
                                        .addDisks(DiskInfo.newBuilder().setMountPoint("/d1")))),
                Empty.parser(),
                WAIT);
        MasterClient asApp = client(m, Credentials.application("app-r", secret));
        for (RequestSlotsResponse r : slots(asApp, "app-r")) {
            assertTrue(r.getLocationsCount() > 0, r.toString());
            assertFalse(r.getSealedSecret().isEmpty(), "the application's own slot answers carry its sealed secret");
            // Sealed: only the cluster-derived key opens it, and only as app-r's.
            assertArrayEquals(
                    secret,
                    SecretBox.open(
                            ClusterKeys.sealingKey(ClusterSecrets.read(secretFile)),
                            r.getSealedSecret().toByteArray(),
                            "app-r"));
            assertThrows(
                    java.security.GeneralSecurityException.class,
                    () -> SecretBox.open(
                            ClusterKeys.sealingKey(ClusterSecrets.read(secretFile)),
                            r.getSealedSecret().toByteArray(),
                            "app-other"));
        }
        // A server asking for an application's slots gets none (it has the secret's source at hand).
        for (RequestSlotsResponse r : slots(asCluster, "app-r")) {
            assertTrue(r.getSealedSecret().isEmpty());
        }
    }

    @Test
    void badRegistrationsAreRefusedNamingWhatIsWrongAndTheMasterKeepsServing() throws Exception {
        Master m = master(c -> c);
        MasterClient c = client(m, Credentials.NONE);
        RegisterApplicationRequest.Builder good = sealed(c, "app-bad", newSecret());

        byte[] altered = good.getSealedSecret().toByteArray();
        altered[altered.length - 1] ^= 1;
        RemoteException seal = refused(() -> register(c, good.clone().setSealedSecret(ByteString.copyFrom(altered))));
        assertEquals(StatusCode.BAD_REQUEST, seal.status());
        assertTrue(seal.getMessage().contains("sealed_secret"), seal.getMessage());

        RemoteException key = refused(() -> register(
                c,
                good.clone()
                        .setMasterPublicKey(ByteString.copyFrom(
                                RegistrationKeys.generate().getPublic().getEncoded()))));
        assertEquals(StatusCode.BAD_REQUEST, key.status());
        assertTrue(key.getMessage().contains("another master's key"), key.getMessage());

        RemoteException clientKey =
                refused(() -> register(c, good.clone().setClientPublicKey(ByteString.copyFromUtf8("not a key"))));
        assertEquals(StatusCode.BAD_REQUEST, clientKey.status());
        assertTrue(clientKey.getMessage().contains("client_public_key"), clientKey.getMessage());

        RemoteException nonce = refused(() -> register(c, good.clone().setNonce(ByteString.copyFromUtf8("short"))));
        assertEquals(StatusCode.BAD_REQUEST, nonce.status());
        assertTrue(nonce.getMessage().contains("nonce"), nonce.getMessage());

        // Another application's registration replayed under this id does not open (the app id is bound in).
        RegisterApplicationRequest.Builder forOther = sealed(c, "app-other", newSecret());
        assertEquals(
                StatusCode.BAD_REQUEST,
                refusal(() -> register(c, forOther.clone().setAppId("app-bad"))));

        // Nothing was registered by the bad ones; the good one still goes through.
        assertFalse(m.<Boolean>state(s -> s.hasApplication("app-bad")));
        register(c, good);
        assertNotNull(m.state(s -> s.sealedSecret("app-bad")));
    }

    @Test
    void anUnregisteredApplicationIsRefusedAndSecretsGoToServersOnly() throws Exception {
        Master m = master(c -> c);
        MasterClient anonymous = client(m, Credentials.NONE);
        // With authentication on, an application registers its secret before anything else.
        assertEquals(StatusCode.UNAUTHENTICATED, refusal(() -> heartbeat(anonymous, "implicit")));
        assertFalse(m.<Boolean>state(s -> s.hasApplication("implicit")));

        byte[] secret = newSecret();
        register(anonymous, "app-s", secret);
        assertEquals(StatusCode.UNAUTHENTICATED, refusal(() -> secretOf(anonymous, "app-s")));
        MasterClient asApp = client(m, Credentials.application("app-s", secret));
        assertEquals(StatusCode.FORBIDDEN, refusal(() -> secretOf(asApp, "app-s")));
        // A wrong secret does not get through the handshake.
        MasterClient wrong = client(m, Credentials.application("app-s", newSecret()));
        assertEquals(StatusCode.UNAUTHENTICATED, refusal(() -> heartbeat(wrong, "app-s")));
    }

    @Test
    void theSecretIsDroppedWhenTheApplicationIsUnregisteredOrExpires() throws Exception {
        // Liveness reads a clock the test moves: no application expires before the test says so, however slow it runs.
        ManualClock clock = new ManualClock();
        Master m = master(
                c -> c.set(MasterConfig.APPLICATION_TIMEOUT.key(), "2s")
                        .set(MasterConfig.LIVENESS_CHECK_INTERVAL.key(), "200ms"),
                clock);
        MasterClient anonymous = client(m, Credentials.NONE);
        MasterClient asCluster = client(m, Credentials.cluster(ClusterSecrets.read(secretFile)));
        byte[] ended = newSecret();
        register(anonymous, "app-ended", ended);
        MasterClient asEnded = client(m, Credentials.application("app-ended", ended));
        asEnded.ask(
                Request.newBuilder()
                        .setUnregisterApplication(
                                UnregisterApplicationRequest.newBuilder().setAppId("app-ended")),
                Empty.parser(),
                WAIT);
        assertNull(m.state(s -> s.sealedSecret("app-ended")));
        assertTrue(secretOf(asCluster, "app-ended").getSealedSecret().isEmpty());
        // A new connection as the ended application is refused: the master no longer knows it.
        MasterClient again = client(m, Credentials.application("app-ended", ended));
        assertEquals(StatusCode.UNAUTHENTICATED, refusal(() -> heartbeat(again, "app-ended")));

        register(anonymous, "app-silent", newSecret());
        assertNotNull(m.state(s -> s.sealedSecret("app-silent")));
        clock.advanceMillis(3_000); // past the application timeout, with no heartbeat
        waitFor(() -> m.state(s -> !s.hasApplication("app-silent")), WAIT, "the silent application expires");
        assertNull(m.state(s -> s.sealedSecret("app-silent")));
    }

    @Test
    void withAuthenticationOffNothingChanges() throws Exception {
        Master m = closing(new Master(
                TestConfs.master(new EstuaryConf().set(io.estuary.common.config.AuthConfig.ENABLED.key(), "false")),
                () -> {}));
        MasterClient c = client(m, Credentials.NONE);
        heartbeat(c, "implicit"); // registered implicitly, as before
        assertTrue(m.<Boolean>state(s -> s.hasApplication("implicit")));
        register(c, "app-off", newSecret()); // a client with authentication on may still register: nothing is kept
        assertTrue(m.<Boolean>state(s -> s.hasApplication("app-off")));
        assertNull(m.state(s -> s.sealedSecret("app-off")));
        assertTrue(secretOf(c, "app-off").getSealedSecret().isEmpty());
    }

    @Test
    void thePermissiveModeStillRegistersClientsOfThePreviousReleaseImplicitly() throws Exception {
        Master m = master(c -> c.set(io.estuary.common.config.AuthConfig.MODE.key(), "permissive"));
        MasterClient anonymous = client(m, Credentials.NONE);
        heartbeat(anonymous, "old-client"); // a 0.1.0 client registers nothing
        assertTrue(m.<Boolean>state(s -> s.hasApplication("old-client")));
        byte[] secret = newSecret();
        register(anonymous, "new-client", secret);
        heartbeat(client(m, Credentials.application("new-client", secret)), "new-client");
        // A wrong proof is refused in both modes; the unchecked peer learns no secret.
        assertEquals(
                StatusCode.UNAUTHENTICATED,
                refusal(() -> heartbeat(client(m, Credentials.application("new-client", newSecret())), "new-client")));
        assertEquals(StatusCode.FORBIDDEN, refusal(() -> secretOf(anonymous, "new-client")));
    }

    @Test
    void threeMastersKeepSecretsSealedThroughALeaderDeathAndARestart() throws Exception {
        try (MasterGroup g = new MasterGroup(
                c -> ClusterSecrets.enable(c, secretFile).set(MasterConfig.HA_SNAPSHOT_THRESHOLD.key(), "5"))) {
            int leader = g.awaitLeader();
            Master follower = g.masters[(leader + 1) % 3];
            TransportClientFactory raw = closing(new TransportClientFactory(new EstuaryConf(), "raw"));
            RemoteException notLeader = assertThrows(
                    RemoteException.class,
                    () -> ControlClient.ask(
                            raw.client("127.0.0.1", follower.port()),
                            Request.newBuilder().setGetRegistrationKey(GetRegistrationKeyRequest.getDefaultInstance()),
                            GetRegistrationKeyResponse.parser()));
            assertEquals(StatusCode.NOT_LEADER, notLeader.status());

            TransportClientFactory anonymousFactory = closing(new TransportClientFactory(new EstuaryConf(), "anon"));
            MasterClient anonymous = new MasterClient(anonymousFactory, g.rpcEndpoints);
            List<byte[]> secrets = new ArrayList<>();
            for (int i = 0; i < 8; i++) { // enough entries for a snapshot
                byte[] s = newSecret();
                secrets.add(s);
                register(anonymous, "app-" + i, s);
            }
            // Every master applied them; no file of any master holds a secret in clear.
            for (Master m : g.masters) {
                waitFor(() -> m.state(s -> s.sealedSecret("app-7")) != null, WAIT, "every master has the secrets");
            }
            for (byte[] s : secrets) assertNoFileHolds(g.dir(), s);
            byte[] sealed0 =
                    g.masters[leader].state(s -> s.sealedSecret("app-0")).toByteArray();
            assertTrue(someFileHolds(g.dir(), sealed0), "the log holds the secret, sealed");

            g.masters[leader].halt();
            g.masters[leader] = null;
            int next = g.awaitLeader();
            // The new leader knows every secret: an application proves it, a worker learns it.
            MasterClient asCluster = new MasterClient(
                    closing(new TransportClientFactory(
                            new EstuaryConf(), "cluster", Credentials.cluster(ClusterSecrets.read(secretFile)))),
                    g.rpcEndpoints);
            for (int i = 0; i < 8; i++) {
                assertArrayEquals(secrets.get(i), opened(secretOf(asCluster, "app-" + i), "app-" + i));
            }
            MasterClient asApp = new MasterClient(
                    closing(new TransportClientFactory(
                            new EstuaryConf(), "app", Credentials.application("app-3", secrets.get(3)))),
                    g.rpcEndpoints);
            heartbeat(asApp, "app-3");

            // The dead master comes back and reads them from its own log and snapshots.
            g.masters[leader] = g.start(leader);
            Master back = g.masters[leader];
            waitFor(() -> back.state(s -> s.sealedSecret("app-7")) != null, 60_000, "the restarted master catches up");
            for (int i = 0; i < 8; i++) {
                String app = "app-" + i;
                byte[] sealed = back.state(s -> s.sealedSecret(app)).toByteArray();
                assertArrayEquals(
                        secrets.get(i),
                        SecretBox.open(ClusterKeys.sealingKey(ClusterSecrets.read(secretFile)), sealed, app));
            }
            assertTrue(next >= 0);
        }
    }

    /** No file under {@code root} contains {@code secret}'s bytes. */
    private static void assertNoFileHolds(Path root, byte[] secret) throws IOException {
        int files = 0;
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : (Iterable<Path>) s.filter(Files::isRegularFile)::iterator) {
                files++;
                byte[] content = Files.readAllBytes(p);
                assertFalse(contains(content, secret), p + " holds an application secret in clear");
            }
        }
        assertTrue(files > 0, "the masters wrote no files under " + root);
    }

    private static boolean someFileHolds(Path root, byte[] bytes) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : (Iterable<Path>) s.filter(Files::isRegularFile)::iterator) {
                if (contains(Files.readAllBytes(p), bytes)) return true;
            }
        }
        return false;
    }

    private static boolean contains(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) if (hay[i + j] != needle[j]) continue outer;
            return true;
        }
        return false;
    }
}
