package io.estuary.master;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.ApplicationHeartbeatRequest;
import io.estuary.common.protocol.ApplicationPrincipal;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.LeaseSlotsRequest;
import io.estuary.common.protocol.LeaseSlotsResponse;
import io.estuary.common.protocol.RegisterWorkerRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.security.ClusterKeys;
import io.estuary.common.security.SecretBox;
import io.estuary.common.status.StatusCode;
import io.estuary.master.protocol.ApplicationRegistered;
import io.estuary.master.protocol.ApplicationRemoved;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.state.LocalStateLog;
import io.estuary.master.state.MasterStateMachine;
import io.estuary.master.state.StateLog;
import io.estuary.network.auth.Credentials;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.MasterClient;
import io.estuary.testing.ClusterSecrets;
import io.estuary.testing.TestConfs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An application's principal (user, tenant) is bound once and never changes: through a real master on loopback with
 * authentication on (registration, heartbeats, the seal handed to workers) and off (the first heartbeat binds), kept
 * in the state's snapshots and dropped with the application; in a group that cannot log it yet, kept by the leader.
 */
class ApplicationPrincipalTest {
    private static final long WAIT = 30_000;
    private static final ApplicationPrincipal ALICE = principal("alice", "analytics");
    private static final ApplicationPrincipal MALLORY = principal("mallory", "analytics");

    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) open.get(i).close();
    }

    private static ApplicationPrincipal principal(String user, String tenant) {
        return ApplicationPrincipal.newBuilder().setUser(user).setTenant(tenant).build();
    }

    private MasterClient client(Master m, Credentials credentials) {
        TransportClientFactory f = new TransportClientFactory(new EstuaryConf(), "test", credentials);
        open.add(f);
        return new MasterClient(f, List.of(m.endpoint()));
    }

    private static void heartbeat(MasterClient c, String app, ApplicationPrincipal claim) throws RemoteException {
        c.ask(
                Request.newBuilder()
                        .setApplicationHeartbeat(ApplicationHeartbeatRequest.newBuilder()
                                .setAppId(app)
                                .setPrincipal(claim)),
                Empty.parser(),
                WAIT);
    }

    @Test
    void withAuthenticationTheRegistrationBindsThePrincipalAndNothingLaterChangesIt() throws Exception {
        Path dir = Files.createTempDirectory("estuary-principal");
        Path secretFile = ClusterSecrets.newFile(dir);
        Master m = new Master(ClusterSecrets.enable(TestConfs.master(), secretFile), () -> {});
        open.add(m);
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        MasterClient anonymous = client(m, Credentials.NONE);
        anonymous.ask(
                Request.newBuilder()
                        .setRegisterApplication(ApplicationSecretsTest.sealed(anonymous, "app-a", secret)
                                .setUser("alice")
                                .setPrincipal(ALICE)),
                Empty.parser(),
                WAIT);
        assertEquals(ALICE, m.state(s -> s.principal("app-a")));

        // The same secret, another user: refused, naming both; the binding stays.
        RemoteException e = assertThrows(
                RemoteException.class,
                () -> anonymous.ask(
                        Request.newBuilder()
                                .setRegisterApplication(ApplicationSecretsTest.sealed(anonymous, "app-a", secret)
                                        .setUser("mallory")
                                        .setPrincipal(MALLORY)),
                        Empty.parser(),
                        WAIT));
        assertEquals(StatusCode.FORBIDDEN, e.status());
        assertTrue(e.getMessage().contains("bound to user 'alice', tenant 'analytics'"), e.getMessage());
        assertTrue(e.getMessage().contains("may not claim user 'mallory'"), e.getMessage());
        // The same registration again: idempotent.
        anonymous.ask(
                Request.newBuilder()
                        .setRegisterApplication(ApplicationSecretsTest.sealed(anonymous, "app-a", secret)
                                .setUser("alice")
                                .setPrincipal(ALICE)),
                Empty.parser(),
                WAIT);
        // A user field that disagrees with the principal in one registration: refused as malformed.
        e = assertThrows(
                RemoteException.class,
                () -> anonymous.ask(
                        Request.newBuilder()
                                .setRegisterApplication(ApplicationSecretsTest.sealed(anonymous, "app-a", secret)
                                        .setUser("bob")
                                        .setPrincipal(ALICE)),
                        Empty.parser(),
                        WAIT));
        assertEquals(StatusCode.BAD_REQUEST, e.status());

        MasterClient app = client(m, Credentials.application("app-a", secret));
        heartbeat(app, "app-a", ALICE);
        e = assertThrows(RemoteException.class, () -> heartbeat(app, "app-a", principal("alice", "finance")));
        assertEquals(StatusCode.FORBIDDEN, e.status());
        assertTrue(e.getMessage().contains("tenant 'finance'"), e.getMessage());
        assertEquals(ALICE, m.state(s -> s.principal("app-a")));

        // Slot answers carry the principal sealed for workers: the cluster-derived key opens it, for that app only.
        client(m, Credentials.cluster(ClusterSecrets.read(secretFile)))
                .ask(
                        Request.newBuilder()
                                .setRegisterWorker(
                                        RegisterWorkerRequest.newBuilder().setWorker(worker())),
                        Empty.parser(),
                        WAIT);
        RequestSlotsResponse slots = app.ask(
                Request.newBuilder()
                        .setRequestSlots(RequestSlotsRequest.newBuilder()
                                .setAppId("app-a")
                                .setShuffleId(1)
                                .setNumPartitions(2)),
                RequestSlotsResponse.parser(),
                WAIT);
        byte[] key = ClusterKeys.sealingKey(ClusterSecrets.read(secretFile));
        assertEquals(
                ALICE,
                ApplicationPrincipal.parseFrom(
                        SecretBox.open(key, slots.getSealedPrincipal().toByteArray(), "principal/app-a")));
        assertThrows(
                java.security.GeneralSecurityException.class,
                () -> SecretBox.open(key, slots.getSealedPrincipal().toByteArray(), "principal/app-b"));
        LeaseSlotsResponse lease = app.ask(
                Request.newBuilder()
                        .setLeaseSlots(LeaseSlotsRequest.newBuilder().setAppId("app-a")),
                LeaseSlotsResponse.parser(),
                WAIT);
        assertFalse(lease.getSealedPrincipal().isEmpty());
    }

    private static WorkerInfo worker() {
        return WorkerInfo.newBuilder()
                .setAddress(WorkerAddress.newBuilder()
                        .setHost("127.0.0.1")
                        .setRpcPort(1)
                        .setPushPort(2)
                        .setFetchPort(3))
                .addDisks(DiskInfo.newBuilder().setMountPoint("/d1"))
                .build();
    }

    @Test
    void withoutAuthenticationTheFirstHeartbeatBindsAndAnotherClaimIsRefused() throws Exception {
        Master m = new Master(
                TestConfs.master(new EstuaryConf().set(io.estuary.common.config.AuthConfig.ENABLED.key(), "false")),
                () -> {});
        open.add(m);
        MasterClient c = client(m, Credentials.NONE);
        c.ask(
                Request.newBuilder()
                        .setApplicationHeartbeat(
                                ApplicationHeartbeatRequest.newBuilder().setAppId("app-b")),
                Empty.parser(),
                WAIT);
        assertNull(m.principalOf("app-b"), "a heartbeat without a principal (0.1.0) binds none");
        heartbeat(c, "app-b", principal("bob", ""));
        assertEquals(principal("bob", ""), m.principalOf("app-b"));
        // Without authentication the binding is the leader's alone: nothing of log format 2 enters the log, so the
        // masters can still go back to a release without it.
        assertNull(m.state(s -> s.principal("app-b")));
        RemoteException e = assertThrows(RemoteException.class, () -> heartbeat(c, "app-b", principal("eve", "")));
        assertEquals(StatusCode.FORBIDDEN, e.status());
        assertTrue(e.getMessage().contains("bound to user 'bob', no tenant"), e.getMessage());
        // A name with a control character is refused before anything binds.
        e = assertThrows(RemoteException.class, () -> heartbeat(c, "app-c", principal("bad\u0007user", "")));
        assertEquals(StatusCode.BAD_REQUEST, e.status());
        assertNull(m.principalOf("app-c"));
    }

    @Test
    void thePrincipalIsInSnapshotsAndGoesWithItsApplication() {
        MasterStateMachine sm = new MasterStateMachine();
        sm.apply(MasterCommand.newBuilder()
                .setApplicationRegistered(
                        ApplicationRegistered.newBuilder().setAppId("a").setPrincipal(ALICE))
                .build());
        // A second binding does not replace the first.
        sm.apply(MasterCommand.newBuilder()
                .setApplicationPrincipalBound(io.estuary.master.protocol.ApplicationPrincipalBound.newBuilder()
                        .setAppId("a")
                        .setPrincipal(MALLORY))
                .build());
        assertEquals(ALICE, sm.read(s -> s.principal("a")));
        MasterStateMachine copy = new MasterStateMachine();
        copy.restore(sm.snapshot());
        assertEquals(ALICE, copy.read(s -> s.principal("a")));
        assertEquals(sm.snapshot(), copy.snapshot());
        sm.apply(MasterCommand.newBuilder()
                .setApplicationRemoved(ApplicationRemoved.newBuilder().setAppId("a"))
                .build());
        assertNull(sm.read(s -> s.principal("a")));
        // Bound to an application the state does not know: nothing.
        sm.apply(MasterCommand.newBuilder()
                .setApplicationPrincipalBound(io.estuary.master.protocol.ApplicationPrincipalBound.newBuilder()
                        .setAppId("gone")
                        .setPrincipal(MALLORY))
                .build());
        assertNull(sm.read(s -> s.principal("gone")));
    }

    /**
     * A group (with authentication on) where a member applies only log format 1 (a 0.1.0 master) until {@code format}
     * rises.
     */
    private static final class OlderGroupLog implements StateLog {
        final LocalStateLog local = new LocalStateLog();
        final AtomicInteger format = new AtomicInteger(1);
        final AtomicInteger principalEntries = new AtomicInteger();

        @Override
        public CompletableFuture<Void> submit(MasterCommand command) {
            if (command.hasApplicationPrincipalBound()
                    || (command.hasApplicationRegistered()
                            && command.getApplicationRegistered().hasPrincipal())) {
                if (format.get() < 2) throw new AssertionError("logged a format-2 command in a format-1 group");
                principalEntries.incrementAndGet();
            }
            return local.submit(command);
        }

        @Override
        public int groupLogFormat() {
            return format.get();
        }

        @Override
        public MasterStateMachine stateMachine() {
            return local.stateMachine();
        }

        @Override
        public boolean isLeader() {
            return true;
        }

        @Override
        public String leaderEndpoint() {
            return null;
        }

        @Override
        public long appliedIndex() {
            return local.appliedIndex();
        }

        @Override
        public void onLeadershipChange(Runnable listener) {}
    }

    @Test
    void aGroupThatCannotLogPrincipalsYetHasTheLeaderKeepThemUntilItCan() {
        OlderGroupLog log = new OlderGroupLog();
        byte[] clusterSecret = new byte[32];
        new SecureRandom().nextBytes(clusterSecret);
        ApplicationRegistrations r = new ApplicationRegistrations(
                log, new ApplicationSecrets(log, clusterSecret, false), new LivenessTracker(60_000));
        r.ensureApplication("a").join();
        r.bind("a", ALICE).join();
        assertEquals(0, log.principalEntries.get());
        assertNull(log.stateMachine().read(s -> s.principal("a")));
        assertEquals(ALICE, r.principalOf("a"));
        StatusCodeAssert.forbidden(() -> r.bind("a", MALLORY));
        log.format.set(2); // every master upgraded
        r.bind("a", ALICE).join(); // the next claim logs what the leader kept
        assertEquals(1, log.principalEntries.get());
        assertEquals(ALICE, log.stateMachine().read(s -> s.principal("a")));
        StatusCodeAssert.forbidden(() -> r.bind("a", MALLORY));
        // Without authentication nothing is logged, whatever the format: the leader keeps it.
        ApplicationRegistrations open = new ApplicationRegistrations(
                log, new ApplicationSecrets(log, null, false), new LivenessTracker(60_000));
        open.ensureApplication("b").join();
        open.bind("b", ALICE).join();
        assertEquals(1, log.principalEntries.get());
        assertEquals(ALICE, open.principalOf("b"));
        open.leadershipChanged(); // what a leader kept is gone with its leadership
        assertNull(open.principalOf("b"));
    }

    /** FORBIDDEN, thrown at once or through the future. */
    private static final class StatusCodeAssert {
        static void forbidden(java.util.function.Supplier<CompletableFuture<Void>> call) {
            Throwable t;
            try {
                call.get().join();
                fail("not refused");
                return;
            } catch (CompletionException e) {
                t = e.getCause();
            } catch (RuntimeException e) {
                t = e;
            }
            assertTrue(t instanceof io.estuary.common.status.StatusException, String.valueOf(t));
            assertEquals(StatusCode.FORBIDDEN, ((io.estuary.common.status.StatusException) t).status());
        }
    }
}
