package io.estuary.client;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.ApplicationHeartbeatRequest;
import io.estuary.common.protocol.ApplicationPrincipal;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.ReserveSlotsRequest;
import io.estuary.common.status.StatusCode;
import io.estuary.master.Master;
import io.estuary.network.auth.Credentials;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import io.estuary.server.admin.AdminJson;
import io.estuary.server.admin.AdminToken;
import io.estuary.testing.ClusterSecrets;
import io.estuary.worker.MiniCluster;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Collections;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Who runs an application is fixed when it registers, with authentication on, through a real master and workers on
 * loopback: the lifecycle manager's user and tenant are bound and shown; afterwards the application itself, on its own
 * authenticated connections, cannot claim another user (heartbeat, reservation) or hand a worker another
 * application's sealed principal; its job stays exact meanwhile.
 */
class PrincipalBindingTest {
    private Path dir;
    private Path secretFile;

    @BeforeEach
    void setUp() throws Exception {
        dir = Files.createTempDirectory("estuary-principal");
        secretFile = ClusterSecrets.newFile(dir);
    }

    @AfterEach
    void tearDown() throws Exception {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Collections.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private static ApplicationPrincipal principal(String user, String tenant) {
        return ApplicationPrincipal.newBuilder().setUser(user).setTenant(tenant).build();
    }

    private static StatusCode ask(TransportClientFactory f, String host, int port, Request.Builder r) throws Exception {
        try {
            TransportClient c = f.client(host, port);
            ControlClient.ask(c, r, Empty.parser());
            return StatusCode.OK;
        } catch (RemoteException e) {
            return e.status();
        }
    }

    private String operatorGet(int port, String path) throws Exception {
        HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:" + port + path).openConnection();
        try {
            c.setRequestProperty(
                    "Authorization",
                    "Bearer " + AdminToken.derivedFrom(secretFile, "test").value());
            assertEquals(200, c.getResponseCode());
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            try (java.io.InputStream in = c.getInputStream()) {
                byte[] buf = new byte[8192];
                for (int n; (n = in.read(buf)) > 0; ) out.write(buf, 0, n);
            }
            return new String(out.toByteArray(), java.nio.charset.StandardCharsets.UTF_8);
        } finally {
            c.disconnect();
        }
    }

    /** A's reservation {@code base} claiming {@code user}, carrying the principal sealed in {@code slots}. */
    private static Request.Builder reservation(
            ReserveSlotsRequest.Builder base, String user, RequestSlotsResponse slots) {
        return Request.newBuilder()
                .setReserveSlots(base.clone().setUser(user).setSealedPrincipal(slots.getSealedPrincipal()));
    }

    @Test
    void theRegisteredPrincipalIsBoundAndNoLaterClaimChangesIt() throws Exception {
        try (MiniCluster cluster = new MiniCluster(1, 2, 1, ClusterSecrets.enable(new EstuaryConf(), secretFile))) {
            EstuaryConf conf = cluster.clientConf()
                    .set(ClientConfig.PUSH_REPLICATE.key(), "true")
                    .set(ClientConfig.USER.key(), "alice")
                    .set(ClientConfig.TENANT.key(), "analytics");
            LifecycleManager a = new LifecycleManager("app-alice", conf, "127.0.0.1");
            LifecycleManager b = new LifecycleManager(
                    "app-bob",
                    conf.copy().set(ClientConfig.USER.key(), "bob").set(ClientConfig.TENANT.key(), ""),
                    "127.0.0.1");
            Master master = cluster.master();
            EstuaryConf executor = conf.copy()
                    .set(
                            AuthConfig.APPLICATION_SECRET.key(),
                            Base64.getEncoder().encodeToString(a.applicationSecret()));
            try (ShuffleClient client = new ShuffleClient(executor);
                    TransportClientFactory asA = new TransportClientFactory(
                            conf, "as-a", Credentials.application(a.appId(), a.applicationSecret()));
                    TransportClientFactory asB = new TransportClientFactory(
                            conf, "as-b", Credentials.application(b.appId(), b.applicationSecret()))) {
                assertEquals(principal("alice", "analytics"), master.state(s -> s.principal(a.appId())));
                assertEquals(principal("bob", ""), master.state(s -> s.principal(b.appId())));

                // A's job, exact.
                ShuffleSpec spec = new ShuffleSpec(a.appId(), 0, 2, 3, "127.0.0.1", a.port());
                long count = 0;
                long sum = 0;
                for (int m = 0; m < spec.numMappers; m++) {
                    MapOutputWriter w = client.openWriter(spec, m, 0);
                    for (int i = 0; i < 2000; i++) {
                        byte[] rec = FramedRecords.framed(m, i, 20 + i % 90);
                        w.write(i % spec.numPartitions, rec, 0, rec.length);
                        count++;
                        sum += FramedRecords.hash(rec);
                    }
                    w.finish();
                }
                long[] got = FramedRecords.readAll(client, spec, 0, spec.numPartitions);
                assertEquals(count, got[0], "records read back");
                assertEquals(sum, got[1], "checksum of the records read back");

                // A, on its own authenticated connection, claims another user: refused; the binding stays.
                String mh = "127.0.0.1";
                int mp = master.port();
                assertEquals(
                        StatusCode.FORBIDDEN,
                        ask(
                                asA,
                                mh,
                                mp,
                                Request.newBuilder()
                                        .setApplicationHeartbeat(ApplicationHeartbeatRequest.newBuilder()
                                                .setAppId(a.appId())
                                                .setPrincipal(principal("mallory", "analytics")))));
                assertEquals(
                        StatusCode.OK,
                        ask(
                                asA,
                                mh,
                                mp,
                                Request.newBuilder()
                                        .setApplicationHeartbeat(ApplicationHeartbeatRequest.newBuilder()
                                                .setAppId(a.appId())
                                                .setPrincipal(principal("alice", "analytics")))));

                // Workers take the user from the master's seal, and refuse a reservation that claims another.
                RequestSlotsResponse slotsA = ControlClient.ask(
                        asA.client(mh, mp),
                        Request.newBuilder()
                                .setRequestSlots(RequestSlotsRequest.newBuilder()
                                        .setAppId(a.appId())
                                        .setShuffleId(7)
                                        .setNumPartitions(1)),
                        RequestSlotsResponse.parser());
                RequestSlotsResponse slotsB = ControlClient.ask(
                        asB.client(mh, mp),
                        Request.newBuilder()
                                .setRequestSlots(RequestSlotsRequest.newBuilder()
                                        .setAppId(b.appId())
                                        .setShuffleId(7)
                                        .setNumPartitions(1)),
                        RequestSlotsResponse.parser());
                assertFalse(slotsA.getSealedPrincipal().isEmpty());
                PartitionLocation loc = slotsA.getLocations(0);
                String wh = loc.getWorker().getHost();
                int wp = loc.getWorker().getRpcPort();
                ReserveSlotsRequest.Builder reserve = ReserveSlotsRequest.newBuilder()
                        .setAppId(a.appId())
                        .setShuffleId(7)
                        .addLocations(loc.toBuilder().clearPeer())
                        .setSealedSecret(slotsA.getSealedSecret());
                assertEquals(StatusCode.FORBIDDEN, ask(asA, wh, wp, reservation(reserve, "mallory", slotsA)));
                // B's seal under A's id does not open: refused as altered.
                assertEquals(StatusCode.BAD_REQUEST, ask(asA, wh, wp, reservation(reserve, "bob", slotsB)));
                assertEquals(StatusCode.OK, ask(asA, wh, wp, reservation(reserve, "alice", slotsA)));
                assertEquals(principal("alice", "analytics"), master.state(s -> s.principal(a.appId())));

                // What operators see: /api/applications (the view `estuary apps` prints) names each one's user.
                com.fasterxml.jackson.databind.JsonNode apps =
                        AdminJson.tree(operatorGet(master.httpPort(), "/api/applications"));
                int seen = 0;
                for (com.fasterxml.jackson.databind.JsonNode app : apps.get("applications")) {
                    if (app.get("id").asText().equals(a.appId())) {
                        assertEquals("alice", app.get("user").asText());
                        assertEquals("analytics", app.get("tenant").asText());
                        seen++;
                    } else if (app.get("id").asText().equals(b.appId())) {
                        assertEquals("bob", app.get("user").asText());
                        assertEquals("", app.get("tenant").asText());
                        seen++;
                    }
                }
                assertEquals(2, seen, apps.toString());
            } finally {
                a.close();
                b.close();
            }
        }
    }
}
