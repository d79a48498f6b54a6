package io.estuary.worker.push;

import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.util.GuardedThreadPool;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.protocol.PushData;
import io.estuary.network.protocol.PushMergedData;
import io.netty.buffer.ByteBuf;
import java.io.Closeable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;

/**
 * Forwards pushes from primary locations to their replicas over this worker's own connections to the other
 * workers' push ports. Over an open connection a push leaves at once from the caller's (Netty) thread; opening a
 * connection may block, so that happens on a small pool of its own. The replica applies its own memory bound: a busy
 * replica refuses and the client backs off, as for any push. Thread-safe; {@link #forward} owns the data it is
 * given and releases it once sent (or on failure).
 *
 * <p>The only sender of pushes marked {@code forwarded}: a replica copy takes no others, so a client can never
 * write a replica without its primary.
 */
public final class Replicator implements Closeable {
    /** Told about each forward once it completes (on a Netty thread): must be cheap and never block. */
    public interface Listener {
        void forwarded(long bytes, long nanos, boolean succeeded);
    }

    private final TransportClientFactory connections;
    private final Listener listener;
    private final ExecutorService senders = new GuardedThreadPool("worker-replicate", 2);
    /** Connections being opened, by host and push port. */
    private final java.util.Map<String, CompletableFuture<TransportClient>> opening =
            new java.util.concurrent.ConcurrentHashMap<>();

    public Replicator(TransportClientFactory connections, Listener listener) {
        this.connections = connections;
        this.listener = listener;
    }

    /**
     * Sends {@code data} (whole batches of the given partitions, at {@code offsets}) to {@code replica}'s worker and
     * releases it. Completes when the replica holds the data, or with the replica's refusal or the connection's failure.
     */
    public CompletableFuture<Void> forward(
            PartitionLocation replica, String shuffleKey, int[] partitions, int[] epochs, int[] offsets, ByteBuf data) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        long bytes = data.readableBytes();
        long t0 = System.nanoTime();
        done.whenComplete((v, e) -> listener.forwarded(bytes, System.nanoTime() - t0, e == null));
        WorkerAddress w = replica.getWorker();
        TransportClient open = connections.activeClient(w.getHost(), w.getPushPort());
        if (open != null) { // the usual case: no thread hop, the push leaves from the calling event loop
            send(open, shuffleKey, partitions, epochs, offsets, data, done);
            return done;
        }
        connecting(w).whenComplete((c, e) -> {
            if (e != null) {
                data.release();
                done.completeExceptionally(e);
            } else {
                send(c, shuffleKey, partitions, epochs, offsets, data, done);
            }
        });
        return done;
    }

    /**
     * The connection being opened to {@code w}'s push port, opening it if nobody is. Forwards that arrive meanwhile
     * wait for that one attempt: a replica that does not answer (stopped, or its host gone) then costs them one
     * connect timeout together, not one each in turn on the few sender threads, which would keep primaries from
     * answering their writers long after the writers stopped waiting.
     */
    private CompletableFuture<TransportClient> connecting(WorkerAddress w) {
        String key = w.getHost() + ":" + w.getPushPort();
        CompletableFuture<TransportClient> mine = new CompletableFuture<>();
        CompletableFuture<TransportClient> pending = opening.putIfAbsent(key, mine);
        if (pending != null) return pending;
        mine.whenComplete((c, e) -> opening.remove(key, mine));
        try {
            senders.execute(() -> {
                try {
                    mine.complete(connections.client(w.getHost(), w.getPushPort()));
                } catch (Exception e) {
                    mine.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) { // shutting down
            mine.completeExceptionally(e);
        }
        return mine;
    }

    private static void send(
            TransportClient c,
            String shuffleKey,
            int[] partitions,
            int[] epochs,
            int[] offsets,
            ByteBuf data,
            CompletableFuture<Void> done) {
        NettyManagedBuffer body = new NettyManagedBuffer(data);
        long id = TransportClient.nextRequestId();
        CompletableFuture<ByteBuf> f = c.send(
                id,
                partitions.length == 1
                        ? new PushData(id, shuffleKey, partitions[0], epochs[0], true, body)
                        : new PushMergedData(id, shuffleKey, partitions, epochs, offsets, true, body));
        f.whenComplete((ack, e) -> {
            if (ack != null) ack.release();
            if (e != null) done.completeExceptionally(e);
            else done.complete(null);
        });
    }

    @Override
    public void close() {
        senders.shutdownNow();
        connections.close();
    }
}
