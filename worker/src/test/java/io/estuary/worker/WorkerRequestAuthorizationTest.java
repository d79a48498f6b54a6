package io.estuary.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.common.ProtocolVersion;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.CommitFilesRequest;
import io.estuary.common.protocol.LocationRole;
import io.estuary.common.protocol.OpenStreamRequest;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.ReserveSlotsRequest;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.common.util.ShuffleKey;
import io.estuary.network.auth.Authorizer;
import io.estuary.network.auth.Identity;
import io.estuary.network.rpc.ControlRpcHandler;
import io.estuary.network.rpc.RequestLimits;
import io.estuary.network.server.ResponseCallback;
import io.estuary.testing.ManualClock;
import io.estuary.worker.fetch.FetchHandler;
import io.estuary.worker.lifecycle.PushGate;
import io.estuary.worker.partition.PartitionRegistry;
import io.estuary.worker.push.CongestionControl;
import io.estuary.worker.storage.StorageManager;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Authorization of the worker's control requests (reserve slots, commit files) and of opening a fetch stream, on
 * real handlers with a real registry: with authentication on, application B is refused FORBIDDEN and an anonymous
 * connection UNAUTHENTICATED on application A's shuffle, and nothing is reserved or committed; A and the cluster get
 * past authorization. With authentication off everyone does, as before.
 */
class WorkerRequestAuthorizationTest {
    private static final String APP = "app-A";
    private static final int SHUFFLE = 3;

    private Path dir;
    private StorageManager storage;
    private PartitionRegistry registry;
    private CongestionControl congestion;
    private FetchHandler fetch;
    private final List<String> refused = new ArrayList<>();
    private final List<EmbeddedChannel> channels = new ArrayList<>();

    private List<ControlRpcHandler> handlers(boolean auth) throws Exception {
        dir = Files.createTempDirectory("estuary-worker-auth");
        EstuaryConf conf =
                new EstuaryConf().set(WorkerConfig.STORAGE_DIRS, dir.toString()).set(WorkerConfig.DISK_RESERVE, "0");
        storage = new StorageManager(conf);
        registry = new PartitionRegistry(storage);
        congestion = new CongestionControl(conf, storage.memory());
        Authorizer authorizer = new Authorizer(auth, "worker", (r, s) -> refused.add(r + "/" + s), new ManualClock());
        fetch = new FetchHandler(
                registry, storage.cache(), RequestLimits.DEFAULTS, 100, 600_000, new ManualClock(), authorizer);
        return List.of(
                new WorkerControlHandler(
                        registry, new PushGate(), congestion, RequestLimits.DEFAULTS, 1_000, authorizer, null),
                fetch);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (EmbeddedChannel c : channels) c.finishAndReleaseAll();
        registry.remove(ShuffleKey.of(APP, SHUFFLE));
        fetch.close();
        congestion.close();
        storage.close();
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private EmbeddedChannel as(Identity identity) {
        EmbeddedChannel c = new EmbeddedChannel();
        if (identity != null) c.attr(Identity.ATTRIBUTE).set(identity);
        channels.add(c);
        return c;
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

    private StatusCode ask(ControlRpcHandler h, Identity who, Request.Builder r) {
        Answer a = new Answer();
        ByteBuf body = Unpooled.wrappedBuffer(
                r.clone().setProtocolVersion(ProtocolVersion.CURRENT).build().toByteArray());
        try {
            h.receive(as(who), body, a);
        } finally {
            body.release();
        }
        return a.status; // every answer here comes at once (authorization, or a lookup in memory)
    }

    private static Request.Builder reserve() {
        return Request.newBuilder()
                .setReserveSlots(ReserveSlotsRequest.newBuilder()
                        .setAppId(APP)
                        .setShuffleId(SHUFFLE)
                        .addLocations(PartitionLocation.newBuilder()
                                .setPartitionId(0)
                                .setRole(LocationRole.PRIMARY)
                                .setWorker(WorkerAddress.newBuilder()
                                        .setHost("127.0.0.1")
                                        .setRpcPort(1)
                                        .setPushPort(2)
                                        .setFetchPort(3))));
    }

    private static Request.Builder commit() {
        return Request.newBuilder()
                .setCommitFiles(CommitFilesRequest.newBuilder().setAppId(APP).setShuffleId(SHUFFLE));
    }

    private static Request.Builder openStream() {
        return Request.newBuilder()
                .setOpenStream(OpenStreamRequest.newBuilder()
                        .setAppId(APP)
                        .setShuffleId(SHUFFLE)
                        .setPartitionId(0));
    }

    @Test
    void anotherApplicationOrAnAnonymousPeerIsRefusedOnAnApplicationsShuffle() throws Exception {
        List<ControlRpcHandler> h = handlers(true);
        ControlRpcHandler control = h.get(0);
        Identity b = Identity.application("app-B");
        assertEquals(StatusCode.FORBIDDEN, ask(control, b, reserve()));
        assertEquals(StatusCode.UNAUTHENTICATED, ask(control, null, reserve()));
        assertFalse(registry.hasShuffle(ShuffleKey.of(APP, SHUFFLE)), "a refused reservation reserves nothing");
        assertEquals(StatusCode.OK, ask(control, Identity.application(APP), reserve()));
        assertTrue(registry.hasShuffle(ShuffleKey.of(APP, SHUFFLE)));
        assertEquals(StatusCode.OK, ask(control, Identity.CLUSTER, reserve()));

        assertEquals(StatusCode.FORBIDDEN, ask(control, b, commit()));
        assertEquals(StatusCode.UNAUTHENTICATED, ask(control, Identity.ANONYMOUS, commit()));
        assertEquals(StatusCode.FORBIDDEN, ask(fetch, b, openStream()));
        assertEquals(StatusCode.UNAUTHENTICATED, ask(fetch, null, openStream()));
        assertEquals(
                List.of(
                        "reserve_slots/FORBIDDEN",
                        "reserve_slots/UNAUTHENTICATED",
                        "commit_files/FORBIDDEN",
                        "commit_files/UNAUTHENTICATED",
                        "open_stream/FORBIDDEN",
                        "open_stream/UNAUTHENTICATED"),
                refused);
        assertTrue(registry.writer(ShuffleKey.of(APP, SHUFFLE), 0, 0) != null, "the refused commit committed nothing");
        // The owner and the cluster get past authorization (the partition is not committed: UNKNOWN_LOCATION).
        for (Identity who : new Identity[] {Identity.application(APP), Identity.CLUSTER}) {
            StatusCode s = ask(fetch, who, openStream());
            assertNotEquals(StatusCode.FORBIDDEN, s);
            assertNotEquals(StatusCode.UNAUTHENTICATED, s);
        }
        assertEquals(6, refused.size());
    }

    @Test
    void withAuthenticationOffAnyoneIsServedAsBefore() throws Exception {
        List<ControlRpcHandler> h = handlers(false);
        assertEquals(StatusCode.OK, ask(h.get(0), null, reserve()));
        assertEquals(StatusCode.OK, ask(h.get(0), Identity.application("app-B"), reserve()));
        assertEquals(StatusCode.UNKNOWN_LOCATION, ask(fetch, null, openStream()));
        assertTrue(refused.isEmpty());
    }
}
