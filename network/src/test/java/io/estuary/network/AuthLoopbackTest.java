package io.estuary.network;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.status.StatusCode;
import io.estuary.network.auth.AuthFailure;
import io.estuary.network.auth.Credentials;
import io.estuary.network.auth.Identity;
import io.estuary.network.auth.SecretLookup;
import io.estuary.network.auth.ServerAuth;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.protocol.ProtocolRange;
import io.estuary.network.server.ResponseCallback;
import io.estuary.network.server.RpcHandler;
import io.estuary.network.server.TransportObserver;
import io.estuary.network.server.TransportServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The protocol-6 authentication exchange between a real {@link TransportServer} and {@link TransportClientFactory}
 * over loopback: authenticated RPCs work and the server sees who sent them; wrong, unknown and missing credentials
 * fail the connect with {@code UNAUTHENTICATED} and a message naming why, while a good client keeps being served.
 */
class AuthLoopbackTest {
    private static final EstuaryConf CONF =
            new EstuaryConf().set(NetworkConfig.RPC_TIMEOUT, "10s").set(NetworkConfig.IO_THREADS, "2");
    private static final byte[] CLUSTER = filled(1);
    private static final byte[] APP = filled(2);

    /** Looks secrets up on another thread, as a worker asking its master does. */
    private static final ExecutorService LOOKUPS = Executors.newSingleThreadExecutor();

    private static final Recorder observer = new Recorder();
    private static TransportServer server;

    static final class Recorder implements TransportObserver {
        final List<AuthFailure> failures = new CopyOnWriteArrayList<>();
        final AtomicInteger admittedUnchecked = new AtomicInteger();

        @Override
        public void authenticationFailed(AuthFailure reason) {
            failures.add(reason);
        }

        @Override
        public void admittedUnauthenticated() {
            admittedUnchecked.incrementAndGet();
        }
    }

    /** Answers every request with the identity its connection proved. */
    static final class WhoAmI implements RpcHandler {
        @Override
        public void receive(Channel channel, ByteBuf body, ResponseCallback callback) {
            callback.onSuccess(Unpooled.copiedBuffer(Identity.of(channel).name(), StandardCharsets.UTF_8));
        }
    }

    private static byte[] filled(int b) {
        byte[] s = new byte[32];
        Arrays.fill(s, (byte) b);
        return s;
    }

    private static SecretLookup lookup(Function<Identity, byte[]> secrets) {
        return id -> CompletableFuture.supplyAsync(() -> secrets.apply(id), LOOKUPS);
    }

    private static byte[] known(Identity id) {
        return id.isCluster() ? CLUSTER : "app-1".equals(id.appId()) ? APP : null;
    }

    private static TransportServer start(ServerAuth auth, TransportObserver observer, ProtocolRange speaks) {
        return new TransportServer(
                CONF,
                "auth-test",
                "127.0.0.1",
                0,
                new WhoAmI(),
                TransportServer.Options.defaults().auth(auth).observer(observer).speaks(speaks));
    }

    @BeforeAll
    static void startServer() {
        server =
                start(ServerAuth.enforce(lookup(AuthLoopbackTest::known), false), observer, ProtocolRange.THIS_RELEASE);
    }

    @AfterAll
    static void stop() {
        server.close();
        LOOKUPS.shutdownNow();
    }

    private static String whoAmI(TransportClient c) throws RemoteException {
        ByteBuf r = c.sendRpcSync(Unpooled.copiedBuffer("?", StandardCharsets.UTF_8));
        try {
            return r.toString(StandardCharsets.UTF_8);
        } finally {
            r.release();
        }
    }

    private static RemoteException refused(Credentials credentials, int port) {
        try (TransportClientFactory f = new TransportClientFactory(CONF, "refused", credentials)) {
            return assertThrows(RemoteException.class, () -> f.client("127.0.0.1", port));
        }
    }

    @Test
    void authenticatedClientsAreServedAsWhoTheyProved() throws Exception {
        try (TransportClientFactory app =
                        new TransportClientFactory(CONF, "app", Credentials.application("app-1", APP));
                TransportClientFactory cluster =
                        new TransportClientFactory(CONF, "cluster", Credentials.cluster(CLUSTER))) {
            assertEquals("app:app-1", whoAmI(app.client("127.0.0.1", server.port())));
            assertEquals("cluster", whoAmI(cluster.client("127.0.0.1", server.port())));
            assertEquals(Credentials.application("app-1", APP), app.credentials());
        }
    }

    @Test
    void badCredentialsAreRefusedWhileAGoodClientKeepsWorking() throws Exception {
        try (TransportClientFactory good = new TransportClientFactory(CONF, "good", Credentials.cluster(CLUSTER))) {
            TransportClient kept = good.client("127.0.0.1", server.port());
            assertEquals("cluster", whoAmI(kept));
            int failuresBefore = observer.failures.size();

            RemoteException wrong = refused(Credentials.application("app-1", filled(9)), server.port());
            assertEquals(StatusCode.UNAUTHENTICATED, wrong.status(), wrong.getMessage());
            assertTrue(wrong.getMessage().contains("does not know the secret of app:app-1"), wrong.getMessage());

            RemoteException unknown = refused(Credentials.application("app-9", APP), server.port());
            assertEquals(StatusCode.UNAUTHENTICATED, unknown.status(), unknown.getMessage());
            assertTrue(
                    unknown.getMessage().contains("unknown application app-9: never registered, or expired"),
                    unknown.getMessage());

            RemoteException anonymous = refused(Credentials.NONE, server.port());
            assertEquals(StatusCode.UNAUTHENTICATED, anonymous.status(), anonymous.getMessage());
            assertTrue(anonymous.getMessage().contains("admits only authenticated"), anonymous.getMessage());

            assertTrue(kept.isActive(), "the good connection stays up");
            assertEquals("cluster", whoAmI(kept));
            try (TransportClientFactory again =
                    new TransportClientFactory(CONF, "again", Credentials.cluster(CLUSTER))) {
                assertEquals("cluster", whoAmI(again.client("127.0.0.1", server.port())), "new connections too");
            }
            // the wrong secret: the client refused the server's proof and closed (cut); then unknown, anonymous
            waitFor(() -> observer.failures.size() >= failuresBefore + 3, "three failures counted");
            assertTrue(
                    observer.failures
                            .subList(failuresBefore, observer.failures.size())
                            .containsAll(Arrays.asList(
                                    AuthFailure.CUT, AuthFailure.UNKNOWN_IDENTITY, AuthFailure.ANONYMOUS_REFUSED)),
                    observer.failures.toString());
        }
    }

    @Test
    void aServerWithAnotherSecretIsRefusedByTheClient() throws Exception {
        Recorder other = new Recorder();
        try (TransportServer impostor =
                start(ServerAuth.enforce(lookup(id -> filled(7)), false), other, ProtocolRange.THIS_RELEASE)) {
            RemoteException e = refused(Credentials.cluster(CLUSTER), impostor.port());
            assertEquals(StatusCode.UNAUTHENTICATED, e.status());
            assertTrue(e.getMessage().contains("does not know the secret of cluster"), e.getMessage());
            waitFor(() -> other.failures.equals(Arrays.asList(AuthFailure.CUT)), "the cut exchange is counted");
        }
    }

    @Test
    void aProtocol5ClientIsAdmittedUncheckedOnlyByThePermissiveMode() throws Exception {
        Recorder permissiveObserver = new Recorder();
        try (TransportServer permissive = start(
                        ServerAuth.permissive(lookup(AuthLoopbackTest::known)),
                        permissiveObserver,
                        ProtocolRange.THIS_RELEASE);
                TransportClientFactory old = new TransportClientFactory(CONF, "release-0.1.0", 5)) {
            TransportClient c = old.client("127.0.0.1", permissive.port());
            assertEquals(5, c.protocolVersion());
            assertEquals("unchecked", whoAmI(c));
            assertEquals(1, permissiveObserver.admittedUnchecked.get());

            RemoteException e = assertThrows(RemoteException.class, () -> old.client("127.0.0.1", server.port()));
            assertEquals(StatusCode.VERSION_MISMATCH, e.status(), e.getMessage());
            assertTrue(e.getMessage().contains("speaks protocol 6"), e.getMessage());
        }
    }

    @Test
    void authenticationOffServesEveryoneUnchecked() throws Exception {
        try (TransportServer off = start(ServerAuth.off(), TransportObserver.NONE, ProtocolRange.THIS_RELEASE);
                TransportClientFactory app =
                        new TransportClientFactory(CONF, "app", Credentials.application("app-1", APP));
                TransportClientFactory anonymous = new TransportClientFactory(CONF, "anonymous")) {
            assertEquals("unchecked", whoAmI(app.client("127.0.0.1", off.port())));
            assertEquals("unchecked", whoAmI(anonymous.client("127.0.0.1", off.port())));
        }
    }
}
