package io.estuary.client.write;

import io.estuary.common.protocol.PartitionEpoch;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.ReviveRequest;
import io.estuary.common.protocol.ReviveResponse;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.util.EstuaryException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.rpc.ControlClient;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Asks the driver for new locations of failed (or split) partitions, in batches: requests that arrive within one
 * short window, from every task of this executor, go out as one request per shuffle. A partition whose location
 * already moved past the failed epoch is answered from the {@link LocationTable} without asking anyone, so
 * hundreds of tasks failing over one dead worker cost a handful of driver requests. Thread-safe.
 */
public final class ReviveBatcher {
    private final ScheduledExecutorService timer;
    private final long windowMs;
    private final Map<Key, Pending> pending = new HashMap<>();
    /** Guarded by {@code pending}. */
    private boolean closed;

    private static final class Key {
        final LocationTable table;
        final boolean split;

        Key(LocationTable table, boolean split) {
            this.table = table;
            this.split = split;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key && ((Key) o).table == table && ((Key) o).split == split;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(table) * 31 + (split ? 1 : 0);
        }
    }

    private static final class Pending {
        final Supplier<TransportClient> driver;
        final Map<Integer, Integer> epochs = new LinkedHashMap<>();
        final Map<Integer, CompletableFuture<PartitionLocation>> futures = new HashMap<>();
        final Map<String, WorkerAddress> failedWorkers = new LinkedHashMap<>();

        Pending(Supplier<TransportClient> driver) {
            this.driver = driver;
        }
    }

    public ReviveBatcher(ScheduledExecutorService timer, long windowMs) {
        this.timer = timer;
        this.windowMs = windowMs;
    }

    /**
     * The location to use for {@code partition} now that its location at {@code failedEpoch} failed (or, with
     * {@code split}, grew past the soft split size). {@code failedWorker} may be null.
     */
    public CompletableFuture<PartitionLocation> revive(
            LocationTable table,
            Supplier<TransportClient> driver,
            int partition,
            int failedEpoch,
            WorkerAddress failedWorker,
            boolean split) {
        PartitionLocation now = table.get(partition);
        if (now.getEpoch() > failedEpoch) return CompletableFuture.completedFuture(now);
        Key key = new Key(table, split);
        synchronized (pending) {
            if (closed) {
                CompletableFuture<PartitionLocation> f = new CompletableFuture<>();
                f.completeExceptionally(closedError());
                return f;
            }
            Pending p = pending.get(key);
            if (p == null) {
                p = new Pending(driver);
                pending.put(key, p);
                timer.schedule(() -> flush(key), windowMs, TimeUnit.MILLISECONDS);
            }
            p.epochs.merge(partition, failedEpoch, Math::max);
            if (failedWorker != null)
                p.failedWorkers.put(failedWorker.getHost() + ":" + failedWorker.getRpcPort(), failedWorker);
            return p.futures.computeIfAbsent(partition, k -> new CompletableFuture<>());
        }
    }

    /** Revives waiting for their window to end. */
    public int pending() {
        synchronized (pending) {
            int n = 0;
            for (Pending p : pending.values()) n += p.futures.size();
            return n;
        }
    }

    /**
     * Fails every revive not yet sent, and every later one: the client is closing and its timer will not send them.
     * Revives already sent fail as their connection closes.
     */
    public void close() {
        List<Pending> dropped;
        synchronized (pending) {
            closed = true;
            dropped = new ArrayList<>(pending.values());
            pending.clear();
        }
        for (Pending p : dropped) {
            for (CompletableFuture<PartitionLocation> f : p.futures.values()) f.completeExceptionally(closedError());
        }
    }

    private static EstuaryException closedError() {
        return new EstuaryException("revive abandoned: the shuffle client closed");
    }

    private void flush(Key key) {
        Pending p;
        synchronized (pending) {
            p = pending.remove(key);
        }
        if (p == null) return;
        ReviveRequest.Builder req = ReviveRequest.newBuilder()
                .setShuffleId(key.table.shuffleId())
                .setSplit(key.split)
                .addAllFailedWorkers(p.failedWorkers.values());
        List<Integer> order = new ArrayList<>(p.epochs.keySet());
        for (int partition : order) {
            req.addPartitions(
                    PartitionEpoch.newBuilder().setPartitionId(partition).setEpoch(p.epochs.get(partition)));
        }
        CompletableFuture<ReviveResponse> answer;
        try {
            answer = ControlClient.askAsync(
                    p.driver.get(),
                    io.estuary.common.protocol.Request.newBuilder().setRevive(req),
                    ReviveResponse.parser());
        } catch (RuntimeException e) {
            answer = new CompletableFuture<>();
            answer.completeExceptionally(e);
        }
        answer.whenComplete((r, e) -> {
            for (int i = 0; i < order.size(); i++) {
                CompletableFuture<PartitionLocation> f = p.futures.get(order.get(i));
                if (e != null) {
                    f.completeExceptionally(e);
                } else {
                    PartitionLocation loc = r.getLocations(i);
                    key.table.advance(loc);
                    f.complete(key.table.get(loc.getPartitionId()));
                }
            }
        });
    }
}
