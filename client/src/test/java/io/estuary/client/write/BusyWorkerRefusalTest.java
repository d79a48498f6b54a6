package io.estuary.client.write;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.client.spec.ShuffleSpec;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.protocol.LocationRole;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.PartitionStats;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.common.time.Clock;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.protocol.PushData;
import io.estuary.network.protocol.PushMergedData;
import io.estuary.network.server.ResponseCallback;
import io.estuary.network.server.RpcHandler;
import io.estuary.network.server.TransportServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A worker short of memory refuses a merged push with {@code RETRY_LATER}. The push is tried again whole after a
 * back-off: splitting it would send one push per partition (thousands for a wide shuffle) to a worker that just said
 * it has no room, and that flood is what left a loaded one-worker cluster's pushes unanswered until their timeout.
 * Real sockets: a transport server whose handler refuses the first merged pushes, then takes them.
 */
class BusyWorkerRefusalTest {
    private static final int PARTITIONS = 500;

    /** Refuses the first {@code refusals} merged pushes as busy, then keeps every body it is given. */
    static final class BusyWorker implements RpcHandler {
        final AtomicInteger refusalsLeft;
        final AtomicInteger mergedSeen = new AtomicInteger();
        final AtomicInteger singlesSeen = new AtomicInteger();
        final StringBuffer kept = new StringBuffer();

        BusyWorker(int refusals) {
            this.refusalsLeft = new AtomicInteger(refusals);
        }

        @Override
        public void receive(Channel channel, ByteBuf body, ResponseCallback callback) {
            callback.onFailure(StatusCode.BAD_REQUEST, "pushes only");
        }

        @Override
        public void receivePush(Channel channel, PushData push, ResponseCallback callback) {
            singlesSeen.incrementAndGet();
            keep(((NettyManagedBuffer) push.body()).buf());
            callback.onSuccess(null);
        }

        @Override
        public void receivePushMerged(Channel channel, PushMergedData push, ResponseCallback callback) {
            mergedSeen.incrementAndGet();
            ByteBuf body = ((NettyManagedBuffer) push.body()).buf();
            if (refusalsLeft.getAndDecrement() > 0) {
                body.release();
                callback.onFailure(StatusCode.RETRY_LATER, "no direct memory for a flush buffer");
                return;
            }
            keep(body);
            callback.onSuccess(null);
        }

        private void keep(ByteBuf body) {
            try {
                kept.append(body.toString(StandardCharsets.US_ASCII));
            } finally {
                body.release();
            }
        }
    }

    /** The port of one writer: connections from a real client factory, a real timer; nothing asks a driver. */
    static final class Port implements WriterPort {
        final EstuaryConf conf;
        final TransportClientFactory clients;
        final ScheduledExecutorService timer = new ScheduledThreadPoolExecutor(1);

        Port(EstuaryConf conf) {
            this.conf = conf;
            this.clients = new TransportClientFactory(conf, "busy-worker-test");
        }

        @Override
        public EstuaryConf conf() {
            return conf;
        }

        @Override
        public Clock clock() {
            return Clock.system();
        }

        @Override
        public LocationTable register(ShuffleSpec spec, int stageId, int stageAttempt, boolean indeterminate) {
            throw new UnsupportedOperationException("the test gives the writer its table");
        }

        @Override
        public CompletableFuture<PartitionLocation> revive(
                ShuffleSpec spec,
                LocationTable table,
                int partition,
                int failedEpoch,
                WorkerAddress failedWorker,
                boolean split) {
            CompletableFuture<PartitionLocation> f = new CompletableFuture<>();
            f.completeExceptionally(new AssertionError("a busy worker's refusal revived partition " + partition));
            return f;
        }

        @Override
        public int mapperEnd(
                ShuffleSpec spec,
                LocationTable table,
                int stageId,
                int stageAttempt,
                boolean indeterminate,
                int mapId,
                int attemptId,
                List<PartitionStats> stats) {
            throw new UnsupportedOperationException();
        }

        @Override
        public TransportClient pushClient(String appId, WorkerAddress worker)
                throws io.estuary.network.client.RemoteException {
            return clients.client(worker.getHost(), worker.getPushPort());
        }

        @Override
        public void retryTimerSchedule(Runnable retry, long delayMs, Runnable dropped) {
            timer.schedule(retry, delayMs, TimeUnit.MILLISECONDS);
        }

        void close() {
            timer.shutdownNow();
            clients.close();
        }
    }

    @Test
    void aMergedPushRefusedAsBusyIsSentAgainWholeAndArrivesOnce() throws Exception {
        EstuaryConf conf = new EstuaryConf().set(NetworkConfig.RPC_TIMEOUT, "20s");
        BusyWorker handler = new BusyWorker(3);
        try (TransportServer server = new TransportServer(conf, "busy-worker", "127.0.0.1", 0, handler)) {
            Port port = new Port(conf);
            try {
                WorkerAddress w = WorkerAddress.newBuilder()
                        .setHost("127.0.0.1")
                        .setPushPort(server.port())
                        .setRpcPort(1)
                        .setFetchPort(1)
                        .build();
                List<PartitionLocation> locs = new ArrayList<>();
                List<ByteBuf> batches = new ArrayList<>();
                StringBuilder expected = new StringBuilder();
                for (int p = 0; p < PARTITIONS; p++) {
                    locs.add(PartitionLocation.newBuilder()
                            .setPartitionId(p)
                            .setEpoch(0)
                            .setRole(LocationRole.PRIMARY)
                            .setWorker(w)
                            .build());
                    String batch = "[" + p + "]";
                    expected.append(batch);
                    batches.add(Unpooled.copiedBuffer(batch, StandardCharsets.US_ASCII));
                }
                ShuffleSpec spec = new ShuffleSpec("app-busy", 0, 1, PARTITIONS, "127.0.0.1", 1);
                PushSender sender = new PushSender(port, spec, 0, 0, new PushFailurePolicy(5, 20), 20_000, 64 << 20, 0);
                sender.useTable(new LocationTable("app-busy", 0, locs));

                sender.sendMerged(locs, batches);
                sender.awaitAll(60_000);

                assertEquals(4, handler.mergedSeen.get(), "three refusals, then the same merged push is taken");
                assertEquals(0, handler.singlesSeen.get(), "a busy worker's refusal never splits the push");
                assertEquals(expected.toString(), handler.kept.toString(), "every partition's batch arrives once");
                assertTrue(handler.refusalsLeft.get() < 0);
            } finally {
                port.close();
            }
        }
    }
}
