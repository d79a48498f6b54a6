package io.estuary.client;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.LocationTable;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.ApplicationHeartbeatRequest;
import io.estuary.common.protocol.CommitFilesRequest;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.EpochFiles;
import io.estuary.common.protocol.GetApplicationSecretRequest;
import io.estuary.common.protocol.GetReducerFileGroupRequest;
import io.estuary.common.protocol.GetReducerFileGroupResponse;
import io.estuary.common.protocol.GetRegistrationKeyRequest;
import io.estuary.common.protocol.GetRegistrationKeyResponse;
import io.estuary.common.protocol.MapperEndRequest;
import io.estuary.common.protocol.OpenStreamRequest;
import io.estuary.common.protocol.PartitionEpoch;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.RegisterApplicationRequest;
import io.estuary.common.protocol.RegisterShuffleRequest;
import io.estuary.common.protocol.RegisterWorkerRequest;
import io.estuary.common.protocol.ReportFetchFailureRequest;
import io.estuary.common.protocol.ReportWorkerFailuresRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.ReserveSlotsRequest;
import io.estuary.common.protocol.ReviveRequest;
import io.estuary.common.protocol.ReviveSlotsRequest;
import io.estuary.common.protocol.StreamHandle;
import io.estuary.common.protocol.UnregisterApplicationRequest;
import io.estuary.common.protocol.UnregisterShuffleRequest;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerHeartbeatRequest;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.WorkerState;
import io.estuary.common.security.RegistrationKeys;
import io.estuary.common.security.SecretBox;
import io.estuary.common.status.StatusCode;
import io.estuary.master.Master;
import io.estuary.master.state.WorkerId;
import io.estuary.network.auth.Credentials;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.client.ChunkReceivedCallback;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.protocol.Message;
import io.estuary.network.protocol.PushData;
import io.estuary.network.protocol.PushMergedData;
import io.estuary.network.rpc.ControlClient;
import io.estuary.server.admin.AdminToken;
import io.estuary.testing.ClusterSecrets;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 17's cross-application matrix, end to end: one real cluster with authentication on (a master, two workers,
 * replicas on), application A with a live shuffle (two maps ended, the third has pushed part of its output and not
 * ended, nothing read), and application B, registered with its own secret and connected as itself. B tries every
 * application-scoped call of every port on A's shuffle, an anonymous connection tries them too, and each must get the
 * status code of its row ({@link #liveShuffleRows}, {@link #committedShuffleRows}, {@link #adminRows}); then A
 * finishes and reads exactly what it wrote: nothing B or the anonymous peer did changed A's state (the forged "map
 * ended" did not win: every map's winning attempt is A's real one).
 *
 * <p>Every application-scoped call and where it is checked (row here; per-handler unit test):
 *
 * <ul>
 *   <li>Master RPC port (B: FORBIDDEN; anonymous: UNAUTHENTICATED, the port admits anonymous connections to register;
 *       MasterAuthorizationTest): register_application of A's id (B: FORBIDDEN; anonymous, another secret: FORBIDDEN),
 *       request_slots (reserving a shuffle of A, new or placed), lease_slots (a slot lease for A),
 *       record_placement (a placement of a new shuffle of A), revive_slots, report_worker_failures,
 *       unregister_shuffle, unregister_application, application_heartbeat, get_application_secret (servers only);
 *       register_worker and worker_heartbeat (servers only, change cluster state). get_registration_key names no
 *       application (open to all, row expects OK). The master has no call that returns an application's locations
 *       (the driver does, below).
 *   <li>Worker control port (WorkerRequestAuthorizationTest): reserve_slots, commit_files, on each worker. The
 *       control port has no other request (partitions are dropped by the master's heartbeat answers, never by a
 *       client's call). Anonymous: refused in the handshake, UNAUTHENTICATED.
 *   <li>Worker push port (PushAuthorizationTest): push, push_merged, replicate (a forwarded push: servers only), on
 *       each worker. Anonymous: handshake, UNAUTHENTICATED.
 *   <li>Worker fetch port (WorkerRequestAuthorizationTest, StreamAuthorizationTest): open_stream on each worker;
 *       fetch_chunk on a stream A opened (after A's commit); close_stream of A's stream by B is ignored (it has no
 *       answer: checked by the worker's refusal count, then by A reading that stream). Anonymous: handshake,
 *       UNAUTHENTICATED.
 *   <li>A's lifecycle port, the driver (ExecutorRequestAuthorizationTest): register_shuffle, mapper_end (the forged
 *       one: unused attempt id, no counts), get_reducer_file_group (A's locations), revive, report_fetch_failure. This
 *       port admits only A's own identity in the handshake: it cannot check B's proof (it knows no other secret), so
 *       B, the anonymous peer and a peer claiming A's identity with another secret are all refused UNAUTHENTICATED
 *       before any request is read. FORBIDDEN there (a proven identity other than A's: the cluster, or another
 *       application) is checked by the unit test, which sets the identity on the channel.
 *   <li>Admin HTTP, master and worker (AdminAuthenticationTest): every POST (exclude, decommission, activate a
 *       worker; leadership transfer; a worker's decommission) and the reads that name applications or their
 *       locations ({@code GET /api/applications}, {@code /api/shuffles?app=A}, {@code /api/workers},
 *       {@code /api/status}), without a token or with B's application secret as the token: 401, nothing changes
 *       (reads are protected by default, {@code estuary.auth.admin.protectReads}). There is no admin call that acts on
 *       one application (no unregister or exclude of an application).
 * </ul>
 */
class CrossApplicationMatrixTest {
    private static final int MAPS = 3;
    private static final int PARTITIONS = 5;
    private static final int RECORDS = 2000;

    private Path dir;
    private Path secretFile;

    @BeforeEach
    void setUp() throws Exception {
        dir = Files.createTempDirectory("estuary-crossapp");
        secretFile = ClusterSecrets.newFile(dir);
    }

    @AfterEach
    void tearDown() throws Exception {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Collections.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** Who makes a call: B, authenticated as itself; a connection that proves nothing; or B claiming to be A. */
    enum Caller {
        B,
        ANONYMOUS,
        B_AS_A
    }

    /** One call of the matrix: who makes it, at which port, what it is, and the only status it may get. */
    static final class Row {
        final Caller caller;
        final String port;
        final String call;
        final StatusCode expected;
        final Attempt attempt;

        Row(Caller caller, String port, String call, StatusCode expected, Attempt attempt) {
            this.caller = caller;
            this.port = port;
            this.call = call;
            this.expected = expected;
            this.attempt = attempt;
        }

        @Override
        public String toString() {
            return caller + " | " + port + " | " + call + " | " + expected;
        }
    }

    /** Makes the call and answers the status it got (OK when served). */
    @FunctionalInterface
    interface Attempt {
        StatusCode make() throws Exception;
    }

    /** An admin HTTP call of the matrix and the HTTP status it must get. */
    static final class AdminRow {
        final String method;
        final String server;
        final String path;
        final String authorization; // null: no header
        final int expected;

        AdminRow(String method, String server, String path, String authorization, int expected) {
            this.method = method;
            this.server = server;
            this.path = path;
            this.authorization = authorization;
            this.expected = expected;
        }

        @Override
        public String toString() {
            return method + " " + server + " " + path
                    + (authorization == null
                            ? " (no token)"
                            : expected == 200 ? " (operator's token: control)" : " (B's secret as token)")
                    + " | " + expected;
        }
    }

    /** Connections of each caller (made lazily by the factory; refused handshakes surface as RemoteException). */
    private static final class Callers implements AutoCloseable {
        final TransportClientFactory b;
        final TransportClientFactory anonymous;
        final TransportClientFactory bAsA;

        Callers(EstuaryConf conf, LifecycleManager appB, String appA) {
            this.b = new TransportClientFactory(
                    conf, "app-b", Credentials.application(appB.appId(), appB.applicationSecret()));
            this.anonymous = new TransportClientFactory(conf, "anonymous");
            this.bAsA =
                    new TransportClientFactory(conf, "b-as-a", Credentials.application(appA, appB.applicationSecret()));
        }

        TransportClientFactory of(Caller c) {
            return c == Caller.B ? b : c == Caller.ANONYMOUS ? anonymous : bAsA;
        }

        @Override
        public void close() {
            b.close();
            anonymous.close();
            bAsA.close();
        }
    }

    private static EstuaryConf overrides(Path secretFile) {
        return ClusterSecrets.enable(new EstuaryConf(), secretFile).set(WorkerConfig.HEARTBEAT_INTERVAL.key(), "300ms");
    }

    private static EstuaryConf executorConf(EstuaryConf driverConf, byte[] secret) {
        return driverConf
                .copy()
                .set(AuthConfig.APPLICATION_SECRET.key(), Base64.getEncoder().encodeToString(secret));
    }

    private static StatusCode statusOf(RemoteException e) {
        return RemoteException.statusOf(e);
    }

    /** Sends {@code request} on a connection of {@code factory} to {@code host:port}; the status it got. */
    private static StatusCode rpc(TransportClientFactory factory, String host, int port, Request.Builder request)
            throws Exception {
        try {
            TransportClient c = factory.client(host, port);
            ByteBuf answer = TransportClient.await(c.sendRpc(ControlClient.encode(request, c.protocolVersion())));
            answer.release();
            return StatusCode.OK;
        } catch (RemoteException e) {
            return statusOf(e);
        }
    }

    /** Sends a push message (made with its request id) on a connection to {@code host:port}; the status it got. */
    private static StatusCode push(
            TransportClientFactory factory, String host, int port, Function<Long, Message> message) throws Exception {
        try {
            TransportClient c = factory.client(host, port);
            long id = TransportClient.nextRequestId();
            ByteBuf answer = TransportClient.await(c.send(id, message.apply(id)));
            answer.release();
            return StatusCode.OK;
        } catch (RemoteException e) {
            return statusOf(e);
        }
    }

    /** 64 bytes that would corrupt A's partition if a worker took them. */
    private static NettyManagedBuffer forgedBatch() {
        byte[] b = new byte[64];
        new SecureRandom().nextBytes(b);
        return new NettyManagedBuffer(Unpooled.wrappedBuffer(b));
    }

    /** A registration of {@code appId} with {@code secret}, sealed as a real client seals it for the leader's key. */
    private static Request.Builder registration(
            TransportClientFactory factory, String masterHost, int masterPort, String appId, byte[] secret)
            throws Exception {
        TransportClient c = factory.client(masterHost, masterPort);
        GetRegistrationKeyResponse key = ControlClient.ask(
                c,
                Request.newBuilder().setGetRegistrationKey(GetRegistrationKeyRequest.getDefaultInstance()),
                GetRegistrationKeyResponse.parser());
        byte[] nonce = new byte[16];
        new SecureRandom().nextBytes(nonce);
        KeyPair mine = RegistrationKeys.generate();
        byte[] sealingKey = RegistrationKeys.sealingKey(
                mine.getPrivate(), key.getMasterPublicKey().toByteArray(), appId, nonce);
        return Request.newBuilder()
                .setRegisterApplication(RegisterApplicationRequest.newBuilder()
                        .setAppId(appId)
                        .setClientPublicKey(ByteString.copyFrom(mine.getPublic().getEncoded()))
                        .setNonce(ByteString.copyFrom(nonce))
                        .setMasterPublicKey(key.getMasterPublicKey())
                        .setSealedSecret(ByteString.copyFrom(SecretBox.seal(sealingKey, secret, appId)))
                        .setUser("b"));
    }

    private static byte[] randomSecret() {
        byte[] s = new byte[32];
        new SecureRandom().nextBytes(s);
        return s;
    }

    /** A's live shuffle, as the matrix aims at it. */
    private static final class Target {
        final String app;
        final ShuffleSpec spec;
        final LocationTable table;
        final String driverHost;
        final int driverPort;

        Target(LifecycleManager a, ShuffleSpec spec, LocationTable table) {
            this.app = a.appId();
            this.spec = spec;
            this.table = table;
            this.driverHost = a.host();
            this.driverPort = a.port();
        }

        /** A location of A's shuffle on worker {@code w}: a primary when it has one, else a replica. */
        PartitionLocation locationOn(WorkerAddress w) {
            PartitionLocation replica = null;
            for (int p = 0; p < table.numPartitions(); p++) {
                PartitionLocation l = table.get(p);
                if (l.getWorker().equals(w)) return l;
                if (l.hasPeer() && l.getPeer().getWorker().equals(w)) replica = l.getPeer();
            }
            if (replica == null) throw new AssertionError("A's shuffle has no location on " + w);
            return replica;
        }
    }

    /** The master's, each worker's and the driver's rows while A's shuffle is live (nothing committed, nothing read). */
    private static List<Row> liveShuffleRows(Callers callers, MiniCluster cluster, Target t, LifecycleManager appB)
            throws Exception {
        List<Row> rows = new ArrayList<>();
        Master master = cluster.master();
        String mh = "127.0.0.1";
        int mp = master.port();
        int sid = t.table.shuffleId();
        WorkerAddress w0 = cluster.workers().get(0).address();

        // --- the master's RPC port
        List<Object[]> masterCalls = new ArrayList<>();
        masterCalls.add(new Object[] {
            "application_heartbeat",
            Request.newBuilder()
                    .setApplicationHeartbeat(
                            ApplicationHeartbeatRequest.newBuilder().setAppId(t.app))
        });
        masterCalls.add(new Object[] {
            "request_slots (A's placed shuffle)",
            Request.newBuilder()
                    .setRequestSlots(RequestSlotsRequest.newBuilder()
                            .setAppId(t.app)
                            .setShuffleId(sid)
                            .setNumPartitions(PARTITIONS)
                            .setReplicate(true))
        });
        masterCalls.add(new Object[] {
            "request_slots (a new shuffle of A)",
            Request.newBuilder()
                    .setRequestSlots(RequestSlotsRequest.newBuilder()
                            .setAppId(t.app)
                            .setShuffleId(sid + 100)
                            .setNumPartitions(PARTITIONS))
        });
        masterCalls.add(new Object[] {
            "lease_slots",
            Request.newBuilder()
                    .setLeaseSlots(io.estuary.common.protocol.LeaseSlotsRequest.newBuilder()
                            .setAppId(t.app)
                            .setReplicate(true))
        });
        masterCalls.add(new Object[] {
            "record_placement (a new shuffle of A)",
            Request.newBuilder()
                    .setRecordPlacement(io.estuary.common.protocol.RecordPlacementRequest.newBuilder()
                            .setAppId(t.app)
                            .setShuffleId(sid + 200)
                            .addLocations(PartitionLocation.newBuilder()
                                    .setPartitionId(0)
                                    .setWorker(w0)
                                    .setDisk("/forged")))
        });
        masterCalls.add(new Object[] {
            "revive_slots",
            Request.newBuilder()
                    .setReviveSlots(ReviveSlotsRequest.newBuilder()
                            .setAppId(t.app)
                            .setShuffleId(sid)
                            .addPartitionIds(0)
                            .setReplicate(true))
        });
        masterCalls.add(new Object[] {
            "report_worker_failures",
            Request.newBuilder()
                    .setReportWorkerFailures(ReportWorkerFailuresRequest.newBuilder()
                            .setAppId(t.app)
                            .addWorkers(w0)
                            .setReason("forged"))
        });
        masterCalls.add(new Object[] {
            "unregister_shuffle",
            Request.newBuilder()
                    .setUnregisterShuffle(UnregisterShuffleRequest.newBuilder()
                            .setAppId(t.app)
                            .setShuffleId(sid))
        });
        masterCalls.add(new Object[] {
            "unregister_application",
            Request.newBuilder()
                    .setUnregisterApplication(
                            UnregisterApplicationRequest.newBuilder().setAppId(t.app))
        });
        masterCalls.add(new Object[] {
            "get_application_secret",
            Request.newBuilder()
                    .setGetApplicationSecret(
                            GetApplicationSecretRequest.newBuilder().setAppId(t.app))
        });
        WorkerInfo fake = WorkerInfo.newBuilder()
                .setAddress(WorkerAddress.newBuilder()
                        .setHost("127.0.0.9")
                        .setRpcPort(1)
                        .setPushPort(2)
                        .setFetchPort(3))
                .addDisks(DiskInfo.newBuilder().setMountPoint("/d1"))
                .build();
        masterCalls.add(new Object[] {
            "register_worker",
            Request.newBuilder()
                    .setRegisterWorker(RegisterWorkerRequest.newBuilder().setWorker(fake))
        });
        masterCalls.add(new Object[] {
            "worker_heartbeat",
            Request.newBuilder()
                    .setWorkerHeartbeat(WorkerHeartbeatRequest.newBuilder().setWorker(fake))
        });
        for (Object[] c : masterCalls) {
            Request.Builder r = (Request.Builder) c[1];
            rows.add(new Row(
                    Caller.B,
                    "master rpc",
                    (String) c[0],
                    StatusCode.FORBIDDEN,
                    () -> rpc(callers.b, mh, mp, r.clone())));
            rows.add(new Row(
                    Caller.ANONYMOUS,
                    "master rpc",
                    (String) c[0],
                    StatusCode.UNAUTHENTICATED,
                    () -> rpc(callers.anonymous, mh, mp, r.clone())));
        }
        rows.add(new Row(
                Caller.B,
                "master rpc",
                "register_application (A's id, from B's connection)",
                StatusCode.FORBIDDEN,
                () -> rpc(callers.b, mh, mp, registration(callers.b, mh, mp, t.app, appB.applicationSecret()))));
        rows.add(new Row(
                Caller.ANONYMOUS,
                "master rpc",
                "register_application (A's id, another secret)",
                StatusCode.FORBIDDEN,
                () -> rpc(callers.anonymous, mh, mp, registration(callers.anonymous, mh, mp, t.app, randomSecret()))));
        // Controls: B's connection is authenticated and B is served on its own application; the registration key
        // names no application.
        rows.add(new Row(
                Caller.B,
                "master rpc",
                "application_heartbeat (B's own: control)",
                StatusCode.OK,
                () -> rpc(
                        callers.b,
                        mh,
                        mp,
                        Request.newBuilder()
                                .setApplicationHeartbeat(
                                        ApplicationHeartbeatRequest.newBuilder().setAppId(appB.appId())))));
        rows.add(new Row(
                Caller.B,
                "master rpc",
                "get_registration_key (names no application)",
                StatusCode.OK,
                () -> rpc(
                        callers.b,
                        mh,
                        mp,
                        Request.newBuilder().setGetRegistrationKey(GetRegistrationKeyRequest.getDefaultInstance()))));

        // --- each worker's control, push and fetch ports
        for (int i = 0; i < cluster.workers().size(); i++) {
            WorkerAddress w = cluster.workers().get(i).address();
            PartitionLocation loc = t.locationOn(w);
            String h = w.getHost();
            String worker = "worker" + i + " ";
            Request.Builder reserve = Request.newBuilder()
                    .setReserveSlots(ReserveSlotsRequest.newBuilder()
                            .setAppId(t.app)
                            .setShuffleId(sid)
                            .addLocations(loc)
                            .setUser("b"));
            Request.Builder commit = Request.newBuilder()
                    .setCommitFiles(CommitFilesRequest.newBuilder()
                            .setAppId(t.app)
                            .setShuffleId(sid)
                            .addLocations(loc));
            Request.Builder open = Request.newBuilder()
                    .setOpenStream(OpenStreamRequest.newBuilder()
                            .setAppId(t.app)
                            .setShuffleId(sid)
                            .setPartitionId(loc.getPartitionId())
                            .setEpoch(loc.getEpoch()));
            String key = t.table.shuffleKey();
            int p = loc.getPartitionId();
            int e = loc.getEpoch();
            rows.add(new Row(
                    Caller.B,
                    worker + "control",
                    "reserve_slots",
                    StatusCode.FORBIDDEN,
                    () -> rpc(callers.b, h, w.getRpcPort(), reserve.clone())));
            rows.add(new Row(
                    Caller.B,
                    worker + "control",
                    "commit_files",
                    StatusCode.FORBIDDEN,
                    () -> rpc(callers.b, h, w.getRpcPort(), commit.clone())));
            rows.add(new Row(
                    Caller.B,
                    worker + "push",
                    "push",
                    StatusCode.FORBIDDEN,
                    () -> push(
                            callers.b, h, w.getPushPort(), id -> new PushData(id, key, p, e, false, forgedBatch()))));
            rows.add(new Row(
                    Caller.B,
                    worker + "push",
                    "push_merged",
                    StatusCode.FORBIDDEN,
                    () -> push(
                            callers.b,
                            h,
                            w.getPushPort(),
                            id -> new PushMergedData(
                                    id, key, new int[] {p}, new int[] {e}, new int[] {0}, forgedBatch()))));
            rows.add(new Row(
                    Caller.B,
                    worker + "push",
                    "replicate (forwarded push)",
                    StatusCode.FORBIDDEN,
                    () -> push(callers.b, h, w.getPushPort(), id -> new PushData(id, key, p, e, true, forgedBatch()))));
            rows.add(new Row(
                    Caller.B,
                    worker + "fetch",
                    "open_stream",
                    StatusCode.FORBIDDEN,
                    () -> rpc(callers.b, h, w.getFetchPort(), open.clone())));
            rows.add(new Row(
                    Caller.ANONYMOUS,
                    worker + "control",
                    "reserve_slots (handshake)",
                    StatusCode.UNAUTHENTICATED,
                    () -> rpc(callers.anonymous, h, w.getRpcPort(), reserve.clone())));
            rows.add(new Row(
                    Caller.ANONYMOUS,
                    worker + "push",
                    "push (handshake)",
                    StatusCode.UNAUTHENTICATED,
                    () -> push(
                            callers.anonymous,
                            h,
                            w.getPushPort(),
                            id -> new PushData(id, key, p, e, false, forgedBatch()))));
            rows.add(new Row(
                    Caller.ANONYMOUS,
                    worker + "fetch",
                    "open_stream (handshake)",
                    StatusCode.UNAUTHENTICATED,
                    () -> rpc(callers.anonymous, h, w.getFetchPort(), open.clone())));
        }

        // --- A's lifecycle port (the driver)
        List<Object[]> driverCalls = new ArrayList<>();
        driverCalls.add(new Object[] {
            "mapper_end (forged: map 2, unused attempt 99, no counts)",
            Request.newBuilder()
                    .setMapperEnd(MapperEndRequest.newBuilder()
                            .setShuffleId(sid)
                            .setEngineShuffleId(t.spec.shuffleId)
                            .setMapId(2)
                            .setAttemptId(99)
                            .setNumMappers(MAPS)
                            .setNumPartitions(PARTITIONS))
        });
        driverCalls.add(new Object[] {
            "register_shuffle",
            Request.newBuilder()
                    .setRegisterShuffle(RegisterShuffleRequest.newBuilder()
                            .setShuffleId(t.spec.shuffleId)
                            .setNumMappers(MAPS)
                            .setNumPartitions(PARTITIONS)
                            .setStageAttempt(1)
                            .setIndeterminate(true))
        });
        driverCalls.add(new Object[] {
            "get_reducer_file_group (A's locations)",
            Request.newBuilder()
                    .setGetReducerFileGroup(GetReducerFileGroupRequest.newBuilder()
                            .setShuffleId(t.spec.shuffleId)
                            .setStartPartition(0)
                            .setEndPartition(PARTITIONS)
                            .setNumMappers(MAPS)
                            .setNumPartitions(PARTITIONS))
        });
        driverCalls.add(new Object[] {
            "revive",
            Request.newBuilder()
                    .setRevive(ReviveRequest.newBuilder()
                            .setShuffleId(sid)
                            .addPartitions(PartitionEpoch.newBuilder().setPartitionId(0))
                            .addFailedWorkers(w0))
        });
        driverCalls.add(new Object[] {
            "report_fetch_failure",
            Request.newBuilder()
                    .setReportFetchFailure(ReportFetchFailureRequest.newBuilder()
                            .setShuffleId(t.spec.shuffleId)
                            .setEstuaryShuffleId(sid)
                            .setReason("forged"))
        });
        for (Object[] c : driverCalls) {
            Request.Builder r = (Request.Builder) c[1];
            for (Caller who : Caller.values()) {
                rows.add(new Row(
                        who,
                        "A's lifecycle (handshake)",
                        (String) c[0],
                        StatusCode.UNAUTHENTICATED,
                        () -> rpc(callers.of(who), t.driverHost, t.driverPort, r.clone())));
            }
        }
        return rows;
    }

    /** Rows once A's shuffle is committed and A opened a stream on it: B may not read or close A's stream. */
    private static List<Row> committedShuffleRows(Callers callers, WorkerAddress w, long streamId) {
        List<Row> rows = new ArrayList<>();
        rows.add(new Row(
                Caller.B,
                "worker fetch (" + w.getFetchPort() + ")",
                "fetch_chunk (A's stream)",
                StatusCode.FORBIDDEN,
                () -> fetchChunk(callers.b.client(w.getHost(), w.getFetchPort()), streamId, 0)));
        return rows;
    }

    /** Fetches one chunk; the status it got. */
    private static StatusCode fetchChunk(TransportClient c, long streamId, int chunk) throws Exception {
        CompletableFuture<StatusCode> got = new CompletableFuture<>();
        c.fetchChunk(streamId, chunk, new ChunkReceivedCallback() {
            @Override
            public void onSuccess(int index, ByteBuf data) {
                data.release();
                got.complete(StatusCode.OK);
            }

            @Override
            public void onFailure(int index, Throwable cause) {
                got.complete(RemoteException.statusOf(cause));
            }
        });
        return got.get(60, TimeUnit.SECONDS);
    }

    /**
     * Every admin POST of the master and of each worker, and the reads that show applications, without a token and
     * with B's secret as one.
     */
    private static List<AdminRow> adminRows(MiniCluster cluster, Path secretFile, String appA, byte[] secretOfB) {
        String bearerB = "Bearer " + Base64.getEncoder().encodeToString(secretOfB);
        String w0 = WorkerId.of(cluster.workers().get(0).address());
        String m = "master:" + cluster.master().httpPort();
        List<String[]> calls = new ArrayList<>();
        for (String read :
                new String[] {"/api/applications", "/api/shuffles?app=" + appA, "/api/workers", "/api/status"}) {
            calls.add(new String[] {"GET", m, read});
        }
        for (Worker w : cluster.workers()) calls.add(new String[] {"GET", "worker:" + w.httpPort(), "/api/status"});
        for (String action : new String[] {"exclude", "decommission", "activate"}) {
            calls.add(new String[] {"POST", m, "/api/workers/" + action + "?id=" + w0});
        }
        calls.add(new String[] {"POST", m, "/api/leadership/transfer?to=m0"});
        for (Worker w : cluster.workers())
            calls.add(new String[] {"POST", "worker:" + w.httpPort(), "/api/decommission"});
        List<AdminRow> rows = new ArrayList<>();
        for (String[] c : calls) {
            rows.add(new AdminRow(c[0], c[1], c[2], null, 401));
            rows.add(new AdminRow(c[0], c[1], c[2], bearerB, 401));
        }
        // Control: the operator's token (derived from the cluster secret) is served, so the 401s are about the token.
        String operator = "Bearer " + AdminToken.derivedFrom(secretFile, "test").value();
        rows.add(new AdminRow("GET", m, "/api/shuffles?app=" + appA, operator, 200));
        return rows;
    }

    private static int call(AdminRow r) throws Exception {
        int port = Integer.parseInt(r.server.substring(r.server.indexOf(':') + 1));
        HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:" + port + r.path).openConnection();
        try {
            c.setRequestMethod(r.method);
            if (r.authorization != null) c.setRequestProperty("Authorization", r.authorization);
            if (r.method.equals("POST")) {
                c.setDoOutput(true);
                c.getOutputStream().close();
            }
            return c.getResponseCode();
        } finally {
            c.disconnect();
        }
    }

    /** Writes {@code records} records of map {@code map}; adds each to {@code expected} ({count, checksum}). */
    private static void write(MapOutputWriter w, int map, int from, int to, long[] expected) {
        for (int i = from; i < to; i++) {
            byte[] rec = FramedRecords.framed(map, i, 10 + (i * 13) % 200);
            w.write(Math.floorMod(i * 7 + map, PARTITIONS), rec, 0, rec.length);
            expected[0]++;
            expected[1] += FramedRecords.hash(rec);
        }
    }

    @Test
    void anotherApplicationIsRefusedEveryCallOnALiveShuffleAndTheJobStaysExact() throws Exception {
        try (MiniCluster cluster = new MiniCluster(1, 2, 1, overrides(secretFile))) {
            EstuaryConf driverConf = cluster.clientConf()
                    .set(ClientConfig.PUSH_REPLICATE.key(), "true")
                    .set(ClientConfig.PUSH_BUFFER_SIZE.key(), "4k");
            LifecycleManager a = new LifecycleManager("app-a", driverConf, "127.0.0.1");
            LifecycleManager b = new LifecycleManager("app-b", driverConf, "127.0.0.1");
            try (ShuffleClient clientA = new ShuffleClient(executorConf(driverConf, a.applicationSecret()));
                    Callers callers = new Callers(driverConf, b, a.appId());
                    TransportClientFactory ownA = new TransportClientFactory(
                            driverConf, "a-reader", Credentials.application(a.appId(), a.applicationSecret()))) {
                // A's live shuffle: maps 0 and 1 ended, map 2 pushed half of its output and has not ended.
                ShuffleSpec spec = new ShuffleSpec(a.appId(), 0, MAPS, PARTITIONS, "127.0.0.1", a.port());
                long[] expected = new long[2];
                for (int m = 0; m < 2; m++) {
                    MapOutputWriter w = clientA.openWriter(spec, m, 0);
                    write(w, m, 0, RECORDS, expected);
                    w.finish();
                }
                MapOutputWriter live = clientA.openWriter(spec, 2, 0);
                write(live, 2, 0, RECORDS / 2, expected);
                live.pushBuffered();
                Target target = new Target(a, spec, clientA.register(spec, 0, false));

                Master master = cluster.master();
                List<String> table = new ArrayList<>();
                for (Row r : liveShuffleRows(callers, cluster, target, b)) {
                    assertEquals(r.expected, r.attempt.make(), r.toString());
                    table.add(r.toString());
                }
                for (AdminRow r : adminRows(cluster, secretFile, a.appId(), b.applicationSecret())) {
                    assertEquals(r.expected, call(r), r.toString());
                    table.add(r.toString());
                }
                // Each refusal was counted where it happened, once per row (the anonymous peer's worker calls never got
                // past the handshake, so they count as authentication failures instead).
                String[][] masterCounts = {
                    {"application_heartbeat", "1"},
                    {"request_slots", "2"},
                    {"revive_slots", "1"},
                    {"lease_slots", "1"},
                    {"record_placement", "1"},
                    {"report_worker_failures", "1"},
                    {"unregister_shuffle", "1"},
                    {"unregister_application", "1"},
                    {"get_application_secret", "1"},
                    {"register_worker", "1"},
                    {"worker_heartbeat", "1"}
                };
                for (String[] c : masterCounts) {
                    long n = Long.parseLong(c[1]);
                    assertEquals(n, master.metrics().authorizationRefusals(c[0], StatusCode.FORBIDDEN), c[0]);
                    assertEquals(n, master.metrics().authorizationRefusals(c[0], StatusCode.UNAUTHENTICATED), c[0]);
                }
                for (Worker w : cluster.workers()) {
                    for (String r : new String[] {
                        "reserve_slots", "commit_files", "push", "push_merged", "replicate", "open_stream"
                    }) {
                        assertEquals(
                                1,
                                w.admin().metrics().authorizationRefusals(r, StatusCode.FORBIDDEN),
                                w.address() + " " + r);
                    }
                }
                // Nothing of A's changed at the master, and no worker was excluded, blamed or decommissioned.
                assertTrue((boolean) master.state(s -> s.hasApplication(target.app)));
                assertTrue((boolean) master.state(s -> s.isShufflePlaced(target.app, target.table.shuffleId())));
                assertFalse((boolean) master.state(s -> s.isShufflePlaced(target.app, target.table.shuffleId() + 100)));
                assertFalse((boolean) master.state(s -> s.isShufflePlaced(target.app, target.table.shuffleId() + 200)));
                assertEquals(0, master.metrics().workerFailureReports());
                for (Worker w : cluster.workers()) {
                    assertEquals(
                            WorkerState.WORKER_ACTIVE,
                            master.state(s -> s.workerState(WorkerId.of(w.address()))),
                            w.address().toString());
                    assertEquals(WorkerState.WORKER_ACTIVE, w.state());
                }

                // A's map 2 pushes the rest and ends: the real attempt wins, not the forged one.
                write(live, 2, RECORDS / 2, RECORDS, expected);
                live.finish();
                GetReducerFileGroupResponse files = clientA.reducerFiles(spec, 0, PARTITIONS, 0, MAPS);
                assertEquals(
                        java.util.Arrays.asList(0, 0, 0),
                        files.getMapAttemptsList(),
                        "every map's winning attempt is A's own");

                // A opens a stream on a committed copy; B may neither read nor close it.
                EpochFiles epoch = files.getPartitions(0).getEpochs(0);
                PartitionLocation copy = epoch.getCopies(0);
                WorkerAddress w = copy.getWorker();
                TransportClient readerA = ownA.client(w.getHost(), w.getFetchPort());
                StreamHandle stream = ControlClient.ask(
                        readerA,
                        Request.newBuilder()
                                .setOpenStream(OpenStreamRequest.newBuilder()
                                        .setAppId(a.appId())
                                        .setShuffleId(files.getEstuaryShuffleId())
                                        .setPartitionId(0)
                                        .setEpoch(epoch.getEpoch())),
                        StreamHandle.parser());
                assertTrue(stream.getNumChunks() > 0);
                for (Row r : committedShuffleRows(callers, w, stream.getStreamId())) {
                    assertEquals(r.expected, r.attempt.make(), r.toString());
                    table.add(r.toString());
                }
                Worker holder = null;
                for (Worker candidate : cluster.workers())
                    if (candidate.address().equals(w)) holder = candidate;
                io.estuary.worker.admin.WorkerMetrics holderMetrics =
                        holder.admin().metrics();
                assertEquals(1, holderMetrics.authorizationRefusals("fetch_chunk", StatusCode.FORBIDDEN));
                callers.b.client(w.getHost(), w.getFetchPort()).closeStream(stream.getStreamId());
                waitFor(
                        () -> holderMetrics.authorizationRefusals("close_stream", StatusCode.FORBIDDEN) == 1,
                        60_000,
                        "the worker refuses B's close of A's stream");
                // B's close was ignored: A reads the stream's first chunk afterwards (on its own connection).
                assertEquals(StatusCode.OK, fetchChunk(readerA, stream.getStreamId(), 0));
                readerA.closeStream(stream.getStreamId());

                // A's reducers read everything: exactly what A wrote.
                long[] got = FramedRecords.readAll(clientA, spec, 0, PARTITIONS);
                assertArrayEquals(expected, got, "records and checksum read back");
                System.out.println(
                        "Cross-application matrix (caller | port | call | expected):\n  " + String.join("\n  ", table));
            } finally {
                b.close();
                a.close();
            }
        }
    }
}
