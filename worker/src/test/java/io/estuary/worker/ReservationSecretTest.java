package io.estuary.worker;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.estuary.common.ProtocolVersion;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.ApplicationPrincipal;
import io.estuary.common.protocol.GetApplicationSecretResponse;
import io.estuary.common.protocol.LocationRole;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.ReserveSlotsRequest;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.security.ClusterKeys;
import io.estuary.common.security.SecretBox;
import io.estuary.common.status.StatusCode;
import io.estuary.common.util.ShuffleKey;
import io.estuary.network.auth.Authorizer;
import io.estuary.network.auth.Identity;
import io.estuary.network.rpc.RequestLimits;
import io.estuary.network.server.ResponseCallback;
import io.estuary.testing.ManualClock;
import io.estuary.worker.auth.ApplicationSecretCache;
import io.estuary.worker.lifecycle.PushGate;
import io.estuary.worker.partition.PartitionRegistry;
import io.estuary.worker.push.CongestionControl;
import io.estuary.worker.storage.StorageManager;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The reservation path of a worker's control handler with the application's secret sealed in the request (as the
 * master seals it for workers): the real handler, registry and secret cache, requests on channels that carry the
 * identity a handshake would have set. The secret is cached before the answer, without a question to the master (which
 * this test plays by a function that counts and knows nothing); a seal for another application, or under another
 * cluster secret, is refused BAD_REQUEST with nothing reserved or cached; another application's reservation carrying
 * A's seal is FORBIDDEN; the cache stays bounded; with authentication off the field is ignored.
 */
class ReservationSecretTest {
    private static final byte[] CLUSTER =
            "the cluster secret of this test, thirty-two bytes or more".getBytes(StandardCharsets.UTF_8);
    private static final String A = "app-A";
    private static final String B = "app-B";

    private Path dir;
    private StorageManager storage;
    private PartitionRegistry registry;
    private CongestionControl congestion;
    private final AtomicInteger masterQuestions = new AtomicInteger();
    private final List<String> refused = new ArrayList<>();
    private final List<EmbeddedChannel> channels = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        dir = Files.createTempDirectory("estuary-reserve-secret");
        EstuaryConf conf =
                new EstuaryConf().set(WorkerConfig.STORAGE_DIRS, dir.toString()).set(WorkerConfig.DISK_RESERVE, "0");
        storage = new StorageManager(conf);
        registry = new PartitionRegistry(storage);
        congestion = new CongestionControl(conf, storage.memory());
    }

    @AfterEach
    void tearDown() throws Exception {
        for (EmbeddedChannel c : channels) c.finishAndReleaseAll();
        for (String app : new String[] {A, B, "app-C"}) {
            for (int shuffle = 0; shuffle < 4; shuffle++) registry.remove(ShuffleKey.of(app, shuffle));
        }
        congestion.close();
        storage.close();
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** A cache whose master knows no application and counts the questions it gets. */
    private ApplicationSecretCache cache(int capacity) {
        return new ApplicationSecretCache(
                CLUSTER,
                capacity,
                app -> {
                    masterQuestions.incrementAndGet();
                    return GetApplicationSecretResponse.getDefaultInstance();
                },
                Runnable::run);
    }

    private WorkerControlHandler handler(boolean auth, ApplicationSecretCache secrets) {
        Authorizer authorizer = new Authorizer(auth, "worker", (r, s) -> refused.add(r + "/" + s), new ManualClock());
        return new WorkerControlHandler(
                registry, new PushGate(), congestion, RequestLimits.DEFAULTS, 1_000, authorizer, secrets);
    }

    private static byte[] secretOf(String app) {
        return ("the secret of " + app + ", padded past sixteen bytes").getBytes(StandardCharsets.UTF_8);
    }

    /** {@code app}'s secret sealed as the master seals it for workers, under {@code cluster}'s derived key. */
    private static ByteString sealed(byte[] cluster, String app) {
        return ByteString.copyFrom(SecretBox.seal(ClusterKeys.sealingKey(cluster), secretOf(app), app));
    }

    private static Request.Builder reserve(String app, int shuffle, ByteString sealed) {
        return Request.newBuilder()
                .setReserveSlots(ReserveSlotsRequest.newBuilder()
                        .setAppId(app)
                        .setShuffleId(shuffle)
                        .setSealedSecret(sealed)
                        .addLocations(PartitionLocation.newBuilder()
                                .setPartitionId(0)
                                .setRole(LocationRole.PRIMARY)
                                .setWorker(WorkerAddress.newBuilder()
                                        .setHost("127.0.0.1")
                                        .setRpcPort(1)
                                        .setPushPort(2)
                                        .setFetchPort(3))));
    }

    private static final class Answer implements ResponseCallback {
        StatusCode status;
        String error;

        @Override
        public void onSuccess(ByteBuf body) {
            body.release();
            status = StatusCode.OK;
        }

        @Override
        public void onFailure(StatusCode s, String e) {
            status = s;
            error = e;
        }
    }

    private Answer ask(WorkerControlHandler h, Identity who, Request.Builder r) {
        Answer a = new Answer();
        EmbeddedChannel c = new EmbeddedChannel();
        c.attr(Identity.ATTRIBUTE).set(who);
        channels.add(c);
        ByteBuf body = Unpooled.wrappedBuffer(
                r.clone().setProtocolVersion(ProtocolVersion.CURRENT).build().toByteArray());
        try {
            h.receive(c, body, a);
        } finally {
            body.release();
        }
        assertEquals(0, body.refCnt(), "the request's body is released");
        return a; // a reservation is answered at once
    }

    @Test
    void aReservationFillsTheCacheBeforeItIsAnsweredWithoutAskingTheMaster() throws Exception {
        ApplicationSecretCache secrets = cache(10);
        WorkerControlHandler h = handler(true, secrets);
        assertFalse(secrets.contains(A));
        Answer a = ask(h, Identity.application(A), reserve(A, 0, sealed(CLUSTER, A)));
        assertEquals(StatusCode.OK, a.status, a.error);
        assertTrue(registry.hasShuffle(ShuffleKey.of(A, 0)));
        assertTrue(secrets.contains(A), "cached by the time the reservation is answered");
        // A push connection's handshake now finds the secret without a question to the master.
        assertArrayEquals(secretOf(A), secrets.secretOf(Identity.application(A)).get(10, TimeUnit.SECONDS));
        assertEquals(0, masterQuestions.get());
        assertEquals(0, secrets.masterQuestions());
        // A reservation without a seal (a driver or master of the previous release) reserves as before.
        assertEquals(StatusCode.OK, ask(h, Identity.application(A), reserve(A, 1, ByteString.EMPTY)).status);
        assertTrue(registry.hasShuffle(ShuffleKey.of(A, 1)));
        assertTrue(refused.isEmpty());
    }

    @Test
    void aSealForAnotherApplicationOrUnderAnotherClusterSecretIsRefusedAndNothingIsReservedOrCached() {
        ApplicationSecretCache secrets = cache(10);
        WorkerControlHandler h = handler(true, secrets);
        // B, properly authenticated, reserves for itself with A's seal (taken off the wire): it does not open as B's.
        Answer replayed = ask(h, Identity.application(B), reserve(B, 0, sealed(CLUSTER, A)));
        assertEquals(StatusCode.BAD_REQUEST, replayed.status);
        assertTrue(replayed.error.contains(B), replayed.error);
        // Sealed under the key of another cluster secret (or altered).
        byte[] otherCluster = "another cluster's secret, also thirty-two bytes long".getBytes(StandardCharsets.UTF_8);
        Answer foreign = ask(h, Identity.application(B), reserve(B, 1, sealed(otherCluster, B)));
        assertEquals(StatusCode.BAD_REQUEST, foreign.status);
        assertTrue(foreign.error.contains("estuary.auth.cluster.secretFile"), foreign.error);
        assertFalse(registry.hasShuffle(ShuffleKey.of(B, 0)), "a refused reservation reserves nothing");
        assertFalse(registry.hasShuffle(ShuffleKey.of(B, 1)));
        assertFalse(secrets.contains(A));
        assertFalse(secrets.contains(B));
        assertEquals(0, secrets.size());
    }

    @Test
    void anotherApplicationCannotReserveForAEvenWithItsSealAndOnlyAOrTheClusterMay() {
        ApplicationSecretCache secrets = cache(10);
        WorkerControlHandler h = handler(true, secrets);
        Answer forbidden = ask(h, Identity.application(B), reserve(A, 0, sealed(CLUSTER, A)));
        assertEquals(StatusCode.FORBIDDEN, forbidden.status);
        assertEquals(StatusCode.UNAUTHENTICATED, ask(h, Identity.ANONYMOUS, reserve(A, 0, sealed(CLUSTER, A))).status);
        assertEquals(List.of("reserve_slots/FORBIDDEN", "reserve_slots/UNAUTHENTICATED"), refused);
        assertFalse(registry.hasShuffle(ShuffleKey.of(A, 0)));
        assertFalse(secrets.contains(A), "a refused reservation teaches the worker nothing");
        // A server acting for the cluster may (it is trusted with every application).
        assertEquals(StatusCode.OK, ask(h, Identity.CLUSTER, reserve(A, 0, sealed(CLUSTER, A))).status);
        assertTrue(secrets.contains(A));
    }

    @Test
    void theCacheStaysBoundedAndForgetsEndedApplications() {
        ApplicationSecretCache secrets = cache(2);
        WorkerControlHandler h = handler(true, secrets);
        for (String app : new String[] {A, B, "app-C"}) {
            assertEquals(
                    StatusCode.OK, ask(h, Identity.application(app), reserve(app, 0, sealed(CLUSTER, app))).status);
        }
        assertEquals(2, secrets.size(), "bounded by estuary.auth.worker.secretCacheSize");
        assertFalse(secrets.contains(A), "the least recently used went first");
        secrets.forget(B); // what a heartbeat answer's removed_app_ids does
        assertFalse(secrets.contains(B));
        assertTrue(secrets.contains("app-C"));
        // The next reservation of a forgotten application brings its secret back.
        assertEquals(StatusCode.OK, ask(h, Identity.application(B), reserve(B, 1, sealed(CLUSTER, B))).status);
        assertTrue(secrets.contains(B));
        assertEquals(0, masterQuestions.get());
    }

    /** {@code principal} sealed for {@code app} as the master seals it for workers. */
    private static ByteString sealedPrincipal(String app, String user) {
        ApplicationPrincipal p = ApplicationPrincipal.newBuilder().setUser(user).build();
        return ByteString.copyFrom(
                SecretBox.seal(ClusterKeys.sealingKey(CLUSTER), p.toByteArray(), "principal/" + app));
    }

    private static Request.Builder reserveAs(String app, int shuffle, String user, ByteString principal) {
        Request.Builder r = reserve(app, shuffle, sealed(CLUSTER, app));
        r.getReserveSlotsBuilder().setUser(user).setSealedPrincipal(principal);
        return r;
    }

    @Test
    void theUserComesFromTheMastersSealNotFromTheDriver() {
        WorkerControlHandler h = handler(true, cache(10));
        // The seal's user, and a user field that agrees with it: taken.
        assertEquals(
                StatusCode.OK,
                ask(h, Identity.application(A), reserveAs(A, 0, "alice", sealedPrincipal(A, "alice"))).status);
        assertEquals("alice", congestion.userOf(A));
        // A's driver claims another user with its own seal: refused, nothing reserved, the user unchanged.
        Answer claim = ask(h, Identity.application(A), reserveAs(A, 1, "mallory", sealedPrincipal(A, "alice")));
        assertEquals(StatusCode.FORBIDDEN, claim.status);
        assertTrue(claim.error.contains("bound the application to user 'alice'"), claim.error);
        assertFalse(registry.hasShuffle(ShuffleKey.of(A, 1)));
        // B's seal in A's reservation does not open as A's.
        assertEquals(
                StatusCode.BAD_REQUEST,
                ask(h, Identity.application(A), reserveAs(A, 2, "bob", sealedPrincipal(B, "bob"))).status);
        assertEquals("alice", congestion.userOf(A));
        // Without a seal, with authentication on, a driver's word names nobody: its pushes count under no user.
        assertEquals(
                StatusCode.OK, ask(h, Identity.application(B), reserveAs(B, 0, "mallory", ByteString.EMPTY)).status);
        assertNull(congestion.userOf(B));
    }

    @Test
    void withAuthenticationOffTheFirstUserClaimedStays() {
        WorkerControlHandler h = handler(false, null);
        Request.Builder first = reserve(A, 0, ByteString.EMPTY);
        first.getReserveSlotsBuilder().setUser("alice");
        Request.Builder second = reserve(A, 1, ByteString.EMPTY);
        second.getReserveSlotsBuilder().setUser("eve");
        assertEquals(StatusCode.OK, ask(h, Identity.UNCHECKED, first).status);
        assertEquals(StatusCode.OK, ask(h, Identity.UNCHECKED, second).status);
        assertEquals("alice", congestion.userOf(A), "a later reservation does not move A to another user's budget");
    }

    @Test
    void withAuthenticationOffASealIsIgnored() {
        WorkerControlHandler h = handler(false, null);
        ByteString garbage = ByteString.copyFromUtf8("not a seal at all, ignored with authentication off");
        assertEquals(StatusCode.OK, ask(h, Identity.UNCHECKED, reserve(A, 0, garbage)).status);
        assertTrue(registry.hasShuffle(ShuffleKey.of(A, 0)));
    }
}
