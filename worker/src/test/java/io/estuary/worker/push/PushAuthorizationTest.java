package io.estuary.worker.push;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.LocationRole;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.common.util.ShuffleKey;
import io.estuary.network.auth.Authorizer;
import io.estuary.network.auth.Identity;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.protocol.Message;
import io.estuary.network.protocol.PushData;
import io.estuary.network.protocol.PushMergedData;
import io.estuary.network.protocol.RpcFailure;
import io.estuary.network.protocol.RpcResponse;
import io.estuary.testing.ManualClock;
import io.estuary.worker.partition.PartitionRegistry;
import io.estuary.worker.storage.StorageManager;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Authorization of the push port (real pipeline on {@link io.netty.channel.embedded.EmbeddedChannel}s, real registry
 * and storage): with authentication on, a push or merged push to application A's shuffle from application B is
 * refused FORBIDDEN, from an anonymous connection UNAUTHENTICATED, and writes nothing; a push forwarded to a replica
 * copy (replication) must come from the cluster. A itself and the cluster push. With authentication off anyone
 * pushes, as before. Every pushed buffer is released and no memory stays held.
 */
class PushAuthorizationTest {
    private static final String APP = "app-A";
    private static final int SHUFFLE = 7;
    private static final String KEY = ShuffleKey.of(APP, SHUFFLE);

    private Path dir;
    private StorageManager storage;
    private PartitionRegistry registry;
    private CongestionControl congestion;
    private Replicator replicator;
    private final List<EmbeddedPushPort> ports = new ArrayList<>();
    private final List<ByteBuf> pushed = new ArrayList<>();
    private final List<String> refused = new ArrayList<>();

    private PushHandler handler(boolean auth) throws Exception {
        dir = Files.createTempDirectory("estuary-push-auth");
        EstuaryConf conf = new EstuaryConf()
                .set(WorkerConfig.STORAGE_DIRS, dir.toString())
                .set(WorkerConfig.DISK_RESERVE, "0")
                .set(WorkerConfig.MAX_BUFFERED_BYTES, "1m")
                .set(WorkerConfig.FLUSH_BUFFER_SIZE, "4m")
                .set(WorkerConfig.FLUSH_MAX_AGE, "1h");
        storage = new StorageManager(conf);
        registry = new PartitionRegistry(storage);
        congestion = new CongestionControl(conf, storage.memory());
        replicator = new Replicator(new TransportClientFactory(conf, "test-replicate"), (b, n, ok) -> {});
        WorkerAddress self = WorkerAddress.newBuilder()
                .setHost("127.0.0.1")
                .setRpcPort(1)
                .setPushPort(2)
                .setFetchPort(3)
                .build();
        registry.reserve(
                APP,
                SHUFFLE,
                List.of(
                        PartitionLocation.newBuilder()
                                .setPartitionId(0)
                                .setRole(LocationRole.PRIMARY)
                                .setWorker(self)
                                .build(),
                        PartitionLocation.newBuilder()
                                .setPartitionId(1)
                                .setRole(LocationRole.REPLICA)
                                .setWorker(self)
                                .build()));
        return new PushHandler(
                registry,
                storage.memory(),
                replicator,
                congestion,
                1 << 20,
                2 << 20,
                new io.estuary.worker.lifecycle.PushGate(),
                null,
                new Authorizer(auth, "worker-push", (r, s) -> refused.add(r + "/" + s), new ManualClock()));
    }

    @AfterEach
    void tearDown() throws Exception {
        for (EmbeddedPushPort p : ports) p.close();
        registry.remove(KEY);
        replicator.close();
        congestion.close();
        storage.close();
        for (ByteBuf b : pushed) assertEquals(0, b.refCnt(), "a pushed buffer was not released");
        assertEquals(0, storage.memory().held(), "memory still counted as held");
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private EmbeddedPushPort connect(PushHandler handler, Identity identity) {
        EmbeddedPushPort p = new EmbeddedPushPort(handler);
        if (identity != null) p.server.attr(Identity.ATTRIBUTE).set(identity);
        ports.add(p);
        return p;
    }

    private ByteBuf data(int n) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(n);
        b.writeZero(n);
        pushed.add(b);
        return b;
    }

    /** The status of the answer to the push just sent. */
    private static StatusCode answer(EmbeddedPushPort p) {
        Message m = p.reply();
        if (m instanceof RpcFailure) return ((RpcFailure) m).status;
        RpcResponse r = assertInstanceOf(RpcResponse.class, m);
        r.body().release();
        return StatusCode.OK;
    }

    private StatusCode push(EmbeddedPushPort p, int partition, boolean forwarded) {
        p.send(new PushData(1, KEY, partition, 0, forwarded, new NettyManagedBuffer(data(100))));
        return answer(p);
    }

    private StatusCode pushMerged(EmbeddedPushPort p) {
        p.send(new PushMergedData(
                2, KEY, new int[] {0}, new int[] {0}, new int[] {0}, new NettyManagedBuffer(data(100))));
        return answer(p);
    }

    private long written(int partition) {
        return registry.writer(KEY, partition, 0).size();
    }

    @Test
    void anotherApplicationOrAnAnonymousPeerCannotPushOrReplicate() throws Exception {
        PushHandler h = handler(true);
        EmbeddedPushPort b = connect(h, Identity.application("app-B"));
        EmbeddedPushPort anonymous = connect(h, null);
        assertEquals(StatusCode.FORBIDDEN, push(b, 0, false));
        assertEquals(StatusCode.FORBIDDEN, pushMerged(b));
        assertEquals(StatusCode.FORBIDDEN, push(b, 1, true));
        assertEquals(StatusCode.UNAUTHENTICATED, push(anonymous, 0, false));
        assertEquals(StatusCode.UNAUTHENTICATED, pushMerged(anonymous));
        assertEquals(StatusCode.UNAUTHENTICATED, push(anonymous, 1, true));
        // The application itself may not replicate: only a primary's worker (the cluster) forwards to a replica.
        EmbeddedPushPort a = connect(h, Identity.application(APP));
        assertEquals(StatusCode.FORBIDDEN, push(a, 1, true));
        assertEquals(0, written(0));
        assertEquals(0, written(1));
        assertEquals(
                List.of(
                        "push/FORBIDDEN",
                        "push_merged/FORBIDDEN",
                        "replicate/FORBIDDEN",
                        "push/UNAUTHENTICATED",
                        "push_merged/UNAUTHENTICATED",
                        "replicate/UNAUTHENTICATED",
                        "replicate/FORBIDDEN"),
                refused);

        assertEquals(StatusCode.OK, push(a, 0, false));
        assertEquals(StatusCode.OK, pushMerged(a));
        EmbeddedPushPort cluster = connect(h, Identity.CLUSTER);
        assertEquals(StatusCode.OK, push(cluster, 0, false));
        assertEquals(StatusCode.OK, push(cluster, 1, true));
        assertEquals(300, written(0));
        assertEquals(100, written(1));
        assertEquals(7, refused.size());
    }

    @Test
    void withAuthenticationOffAnyonePushesAsBefore() throws Exception {
        PushHandler h = handler(false);
        EmbeddedPushPort anonymous = connect(h, null);
        assertEquals(StatusCode.OK, push(anonymous, 0, false));
        assertEquals(StatusCode.OK, pushMerged(connect(h, Identity.application("app-B"))));
        assertEquals(StatusCode.OK, push(anonymous, 1, true));
        assertEquals(200, written(0));
        assertTrue(refused.isEmpty());
    }
}
