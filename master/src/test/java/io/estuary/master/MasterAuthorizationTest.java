package io.estuary.master;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.common.ProtocolVersion;
import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.protocol.ApplicationHeartbeatRequest;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.RegisterWorkerRequest;
import io.estuary.common.protocol.ReportWorkerFailuresRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.ReviveSlotsRequest;
import io.estuary.common.protocol.UnregisterApplicationRequest;
import io.estuary.common.protocol.UnregisterShuffleRequest;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerHeartbeatRequest;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.status.StatusCode;
import io.estuary.network.auth.Identity;
import io.estuary.network.server.ResponseCallback;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Authorization at a real master (authentication on, requests driven into its handler on channels that carry the
 * identity a handshake would have set): every application-scoped request of application A is refused FORBIDDEN to
 * application B and UNAUTHENTICATED to an anonymous connection, is counted, and changes nothing; A itself and the
 * cluster are served; worker calls need the cluster. With authentication off everyone is served as before.
 */
class MasterAuthorizationTest {
    private static final String A = "app-A";
    private static final WorkerInfo WORKER = WorkerInfo.newBuilder()
            .setAddress(WorkerAddress.newBuilder()
                    .setHost("127.0.0.9")
                    .setRpcPort(1)
                    .setPushPort(2)
                    .setFetchPort(3))
            .addDisks(DiskInfo.newBuilder().setMountPoint("/d1"))
            .build();

    private final List<EmbeddedChannel> channels = new ArrayList<>();

    @AfterEach
    void close() {
        for (EmbeddedChannel c : channels) c.finishAndReleaseAll();
    }

    private static Master start(boolean auth) throws Exception {
        EstuaryConf conf = new EstuaryConf()
                .set(MasterConfig.PORT, "0")
                .set(MasterConfig.HTTP_PORT, "0")
                .set(MasterConfig.HOST, "127.0.0.1")
                .set(AuthConfig.ENABLED, String.valueOf(auth));
        if (auth) {
            // Permissive keeps implicit application registration (this test sets identities on its channels
            // directly, so the authorization it checks is the same in both modes).
            conf.set(AuthConfig.MODE, "permissive");
            conf = io.estuary.testing.ClusterSecrets.enable(
                    conf,
                    io.estuary.testing.ClusterSecrets.newFile(
                            java.nio.file.Files.createTempDirectory("estuary-authz")));
        }
        return new Master(conf, () -> {});
    }

    private EmbeddedChannel as(Identity identity) {
        EmbeddedChannel c = new EmbeddedChannel();
        if (identity != null) c.attr(Identity.ATTRIBUTE).set(identity);
        channels.add(c);
        return c;
    }

    /** The answer's status, once it came. */
    private static final class Answer implements ResponseCallback {
        volatile StatusCode status;
        volatile String error;

        @Override
        public void onSuccess(ByteBuf body) {
            body.release();
            status = StatusCode.OK;
        }

        @Override
        public void onFailure(StatusCode s, String e) {
            error = e;
            status = s;
        }
    }

    private StatusCode ask(Master m, Identity who, Request.Builder request) throws Exception {
        Answer a = new Answer();
        ByteBuf body = Unpooled.wrappedBuffer(request.clone()
                .setProtocolVersion(ProtocolVersion.CURRENT)
                .build()
                .toByteArray());
        try {
            m.rpcHandler().receive(as(who), body, a);
        } finally {
            body.release();
        }
        waitFor(() -> a.status != null, 30_000, "an answer to " + request.getPayloadCase());
        if (a.status == StatusCode.FORBIDDEN) {
            assertTrue(a.error.contains(who.name()), a.error); // names who asked, and for what application
        }
        return a.status;
    }

    private static Request.Builder slots(int shuffle) {
        return Request.newBuilder()
                .setRequestSlots(RequestSlotsRequest.newBuilder()
                        .setAppId(A)
                        .setShuffleId(shuffle)
                        .setNumPartitions(2));
    }

    /** One request of every application-scoped type, each naming application A. */
    private static List<Request.Builder> applicationRequests() {
        List<Request.Builder> out = new ArrayList<>();
        out.add(Request.newBuilder()
                .setApplicationHeartbeat(
                        ApplicationHeartbeatRequest.newBuilder().setAppId(A)));
        out.add(slots(2));
        out.add(Request.newBuilder()
                .setReviveSlots(ReviveSlotsRequest.newBuilder()
                        .setAppId(A)
                        .setShuffleId(1)
                        .addPartitionIds(0)));
        out.add(Request.newBuilder()
                .setReportWorkerFailures(ReportWorkerFailuresRequest.newBuilder()
                        .setAppId(A)
                        .addWorkers(WORKER.getAddress())
                        .setReason("forged")));
        out.add(Request.newBuilder()
                .setUnregisterShuffle(
                        UnregisterShuffleRequest.newBuilder().setAppId(A).setShuffleId(1)));
        out.add(Request.newBuilder()
                .setUnregisterApplication(
                        UnregisterApplicationRequest.newBuilder().setAppId(A)));
        return out;
    }

    private static Request.Builder registerWorker() {
        return Request.newBuilder()
                .setRegisterWorker(RegisterWorkerRequest.newBuilder().setWorker(WORKER));
    }

    private static Request.Builder workerHeartbeat() {
        return Request.newBuilder()
                .setWorkerHeartbeat(WorkerHeartbeatRequest.newBuilder().setWorker(WORKER));
    }

    @Test
    void anotherApplicationAndAnAnonymousPeerAreRefusedEveryApplicationRequest() throws Exception {
        try (Master m = start(true)) {
            Identity b = Identity.application("app-B");
            for (Request.Builder r : new Request.Builder[] {registerWorker(), workerHeartbeat()}) {
                assertEquals(StatusCode.FORBIDDEN, ask(m, Identity.application(A), r));
                assertEquals(StatusCode.UNAUTHENTICATED, ask(m, null, r));
            }
            assertEquals(StatusCode.OK, ask(m, Identity.CLUSTER, registerWorker()));
            assertEquals(StatusCode.OK, ask(m, Identity.CLUSTER, workerHeartbeat()));
            assertEquals(StatusCode.OK, ask(m, Identity.application(A), slots(1)));
            assertTrue((boolean) m.state(s -> s.isShufflePlaced(A, 1)));

            for (Request.Builder r : applicationRequests()) {
                String type = r.getPayloadCase().name().toLowerCase(java.util.Locale.ROOT);
                assertEquals(StatusCode.FORBIDDEN, ask(m, b, r), type);
                assertEquals(StatusCode.UNAUTHENTICATED, ask(m, Identity.ANONYMOUS, r), type);
                assertEquals(StatusCode.UNAUTHENTICATED, ask(m, null, r), type);
                assertEquals(1, m.metrics().authorizationRefusals(type, StatusCode.FORBIDDEN), type);
                assertEquals(2, m.metrics().authorizationRefusals(type, StatusCode.UNAUTHENTICATED), type);
            }
            // Nothing of A changed: its shuffle is placed, it is registered, no shuffle 2, no worker blamed.
            assertTrue((boolean) m.state(s -> s.isShufflePlaced(A, 1)));
            assertTrue((boolean) m.state(s -> s.hasApplication(A)));
            assertTrue(!(boolean) m.state(s -> s.isShufflePlaced(A, 2)));
            assertTrue((boolean) m.state(s -> s.workerState(io.estuary.master.state.WorkerId.of(WORKER.getAddress()))
                    == io.estuary.common.protocol.WorkerState.WORKER_ACTIVE));
            assertEquals(0, m.metrics().workerFailureReports());

            // A itself, then the cluster, are served every request (unregistering last).
            for (Request.Builder r : applicationRequests()) {
                assertEquals(
                        StatusCode.OK,
                        ask(m, Identity.application(A), r),
                        r.getPayloadCase().toString());
            }
            assertTrue(!(boolean) m.state(s -> s.hasApplication(A)));
            for (Request.Builder r : applicationRequests()) {
                assertEquals(
                        StatusCode.OK,
                        ask(m, Identity.CLUSTER, r),
                        r.getPayloadCase().toString());
            }
        }
    }

    @Test
    void withAuthenticationOffAnyConnectionIsServedAsBefore() throws Exception {
        try (Master m = start(false)) {
            assertEquals(StatusCode.OK, ask(m, null, registerWorker()));
            assertEquals(StatusCode.OK, ask(m, Identity.application("app-B"), slots(1)));
            for (Request.Builder r : applicationRequests()) {
                assertEquals(StatusCode.OK, ask(m, null, r), r.getPayloadCase().toString());
            }
            assertEquals(0, m.metrics().authorizationRefusals("unregister_application", StatusCode.UNAUTHENTICATED));
        }
    }
}
