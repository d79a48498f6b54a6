package io.estuary.worker.admin;

import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.DiskStatus;
import io.estuary.common.status.StatusCode;
import io.estuary.network.auth.AuthFailure;
import io.estuary.network.netty.NettyUtils;
import io.estuary.network.server.TransportObserver;
import io.estuary.server.admin.BuildInfo;
import io.estuary.worker.storage.JvmDirectMemory;
import io.estuary.worker.storage.MemoryTracker;
import io.estuary.worker.storage.StorageManager;
import io.netty.buffer.PooledByteBufAllocator;
import io.prometheus.client.Collector;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.Counter;
import io.prometheus.client.CounterMetricFamily;
import io.prometheus.client.Gauge;
import io.prometheus.client.GaugeMetricFamily;
import io.prometheus.client.Histogram;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.IntSupplier;

/**
 * The worker's Prometheus metrics, in a registry of its own (not the global one), so several workers in one JVM
 * (tests) do not clash. Traffic is counted at the transport boundary ({@link #observer}), replication by the
 * {@link io.estuary.worker.push.Replicator}'s listener ({@link #replicated}), flushes by each disk's flusher
 * ({@link #watchFlushes}); memory, disks, streams, partitions and stalls are read from their owners at each scrape.
 *
 * <p>Thread-safe: the recording methods are called from Netty and flusher threads concurrently.
 */
public final class WorkerMetrics {
    private static final double[] SECONDS = {0.0005, 0.001, 0.005, 0.02, 0.1, 0.5, 2, 10};

    private final CollectorRegistry registry = new CollectorRegistry();
    private final MemoryTracker memory;
    private final Counter pushRequests;
    private final Counter pushBytes;
    private final Histogram pushSeconds;
    private final Counter replicateBytes;
    private final Counter replicateFailures;
    private final Histogram replicateSeconds;
    private final Counter fetchBytes;
    private final Counter fetchChunks;
    private final Histogram fetchChunkSeconds;
    private final Counter refusals;
    private final Counter authorizationRefusals;

    /** The requests a worker authorizes, so each has its refusal counts from the start. */
    private static final String[] AUTHORIZED_REQUESTS = {
        "reserve_slots",
        "commit_files",
        "push",
        "push_merged",
        "replicate",
        "open_stream",
        "fetch_chunk",
        "close_stream"
    };

    private final Counter authFailures;
    private final Counter admittedUnchecked;
    private final Histogram flushSeconds;
    private final Gauge connections;

    /**
     * @param activeShuffles how many shuffles this worker holds slots of
     * @param openStreams how many fetch streams are open
     */
    public WorkerMetrics(
            String version,
            StorageManager storage,
            IntSupplier activeShuffles,
            IntSupplier openStreams,
            StallDetector stalls) {
        BuildInfo.register(registry, "worker", version);
        io.estuary.server.admin.JvmMetrics.register(registry);
        this.memory = storage.memory();
        pushRequests = Counter.build(
                        "estuary_worker_push_requests_total",
                        "Pushes (plain and merged) received, accepted or refused; replicas count the copies they receive.")
                .register(registry);
        pushBytes = Counter.build(
                        "estuary_worker_push_bytes_total",
                        "Bytes of accepted pushes (including copies received as a replica).")
                .register(registry);
        pushSeconds = Histogram.build(
                        "estuary_worker_push_seconds",
                        "Time from a push's arrival to its answer, including forwarding it to its replica.")
                .buckets(SECONDS)
                .register(registry);
        replicateBytes = Counter.build(
                        "estuary_worker_replicate_bytes_total",
                        "Bytes this worker forwarded to replicas and they acknowledged.")
                .register(registry);
        replicateFailures = Counter.build(
                        "estuary_worker_replicate_failures_total",
                        "Forwards to replicas that were refused or whose connection failed.")
                .register(registry);
        replicateSeconds = Histogram.build(
                        "estuary_worker_replicate_seconds", "Time from forwarding a push to its replica's answer.")
                .buckets(SECONDS)
                .register(registry);
        fetchBytes = Counter.build("estuary_worker_fetch_bytes_total", "Bytes of chunks sent to readers.")
                .register(registry);
        fetchChunks = Counter.build(
                        "estuary_worker_fetch_chunks_total",
                        "Chunks sent to readers (a partition sent inline with its open counts as one).")
                .register(registry);
        fetchChunkSeconds = Histogram.build(
                        "estuary_worker_fetch_chunk_seconds",
                        "Time from a chunk fetch request's arrival until the chunk was written to the connection.")
                .buckets(SECONDS)
                .register(registry);
        refusals = Counter.build(
                        "estuary_worker_refusals_total",
                        "Requests answered with a failure (pushes, control requests, chunk fetches), by the status the client "
                                + "got.")
                .labelNames("status")
                .register(registry);
        for (StatusCode s : StatusCode.values()) {
            if (s != StatusCode.OK && s != StatusCode.SOFT_SPLIT) refusals.labels(s.name()); // zero until the first
        }
        authorizationRefusals = Counter.build(
                        "estuary_worker_authorization_refusals_total",
                        "Requests refused because the connection's identity may not make them: UNAUTHENTICATED (it "
                                + "proved none) or FORBIDDEN (another application's data or stream, or replication "
                                + "from a non-server), by request type.")
                .labelNames("request", "status")
                .register(registry);
        for (String r : AUTHORIZED_REQUESTS) {
            authorizationRefusals.labels(r, StatusCode.UNAUTHENTICATED.name());
            authorizationRefusals.labels(r, StatusCode.FORBIDDEN.name());
        }
        flushSeconds = Histogram.build("estuary_worker_flush_seconds", "Time to write one buffer to disk, by disk.")
                .labelNames("mount")
                .buckets(SECONDS)
                .register(registry);
        authFailures = Counter.build(
                        "estuary_worker_authentication_failures_total",
                        "Connections refused or cut in the authentication handshake, by reason (each also logged WARN "
                                + "with the peer's address, rate-limited).")
                .labelNames("reason")
                .register(registry);
        for (AuthFailure r : AuthFailure.values()) authFailures.labels(r.label());
        admittedUnchecked = Counter.build(
                        "estuary_worker_unauthenticated_admitted_total",
                        "Connections that proved no identity and were admitted unchecked by the permissive mode "
                                + "(estuary.auth.mode=permissive, for a rolling upgrade).")
                .register(registry);
        connections = Gauge.build("estuary_worker_connections", "Open connections, by server (rpc, push, fetch).")
                .labelNames("server")
                .register(registry);
        new Collector() {
            @Override
            public List<MetricFamilySamples> collect() {
                return gauges(storage, activeShuffles, openStreams, stalls);
            }
        }.register(registry);
    }

    private List<Collector.MetricFamilySamples> gauges(
            StorageManager storage, IntSupplier activeShuffles, IntSupplier openStreams, StallDetector stalls) {
        List<Collector.MetricFamilySamples> out = new ArrayList<>();
        out.add(new GaugeMetricFamily(
                "estuary_worker_memory_held_bytes",
                "Off-heap bytes held: pushed data waiting to be flushed, and the small-partition cache.",
                memory.held()));
        out.add(new GaugeMetricFamily(
                "estuary_worker_memory_limit_bytes",
                "The worker's memory limit (estuary.worker.memory.maxBuffered, or half the direct memory limit when smaller); "
                        + "reading pushes pauses at pausePushRatio of it.",
                memory.limit()));
        // Beside what flush buffers hold, the JVM's direct memory also carries the pool's partly used chunks and
        // receive buffers: near its limit an allocation stalls its thread while the JDK collects and retries.
        out.add(new GaugeMetricFamily(
                "estuary_worker_direct_memory_used_bytes",
                "Direct memory the JVM has allocated (buffers with and without a cleaner).",
                JvmDirectMemory.INSTANCE.used()));
        out.add(new GaugeMetricFamily(
                "estuary_worker_direct_memory_max_bytes",
                "The JVM's direct memory limit (-XX:MaxDirectMemorySize, else the heap limit).",
                JvmDirectMemory.INSTANCE.max()));
        PooledByteBufAllocator pool = NettyUtils.allocator();
        out.add(new GaugeMetricFamily(
                "estuary_worker_buffer_pool_chunk_bytes",
                "Direct memory held by the buffer pool in whole chunks, used or not.",
                pool.metric().usedDirectMemory()));
        out.add(new GaugeMetricFamily(
                "estuary_worker_buffer_pool_pinned_bytes",
                "Direct memory of the buffer pool's chunks in live buffers; the rest of the chunks is free or lost to "
                        + "fragmentation.",
                pool.pinnedDirectMemory()));
        out.add(new GaugeMetricFamily(
                "estuary_worker_memory_paused",
                "1 while the worker has paused reading push connections for want of memory, else 0.",
                paused() ? 1 : 0));
        GaugeMetricFamily status = new GaugeMetricFamily(
                "estuary_worker_disk_status",
                "1 for each disk's current status (DISK_HEALTHY, DISK_FULL, DISK_FAILED, DISK_SLOW), 0 for the others.",
                java.util.Arrays.asList("mount", "status"));
        GaugeMetricFamily usable = new GaugeMetricFamily(
                "estuary_worker_disk_usable_bytes", "Usable space of each disk.", Collections.singletonList("mount"));
        GaugeMetricFamily slots = new GaugeMetricFamily(
                "estuary_worker_disk_active_slots",
                "Partition locations being written on each disk (reserved, not yet committed).",
                Collections.singletonList("mount"));
        long activePartitions = 0;
        for (DiskInfo d : storage.diskInfos()) {
            for (DiskStatus s : DiskStatus.values()) {
                if (s == DiskStatus.UNRECOGNIZED) continue;
                status.addMetric(java.util.Arrays.asList(d.getMountPoint(), s.name()), d.getStatus() == s ? 1 : 0);
            }
            usable.addMetric(Collections.singletonList(d.getMountPoint()), d.getUsableBytes());
            slots.addMetric(Collections.singletonList(d.getMountPoint()), d.getActiveSlots());
            activePartitions += d.getActiveSlots();
        }
        out.add(status);
        out.add(usable);
        out.add(slots);
        CounterMetricFamily written = new CounterMetricFamily(
                "estuary_worker_disk_written_bytes",
                "Bytes written to partition files on each disk, with O_DIRECT (path=direct) or through the page cache "
                        + "(path=page_cache); see estuary.worker.flush.directIo.",
                java.util.Arrays.asList("mount", "path"));
        for (io.estuary.worker.storage.Disk d : storage.disks()) {
            written.addMetric(java.util.Arrays.asList(d.mountPoint(), "direct"), d.writtenBytes(true));
            written.addMetric(java.util.Arrays.asList(d.mountPoint(), "page_cache"), d.writtenBytes(false));
        }
        out.add(written);
        out.add(new GaugeMetricFamily(
                "estuary_worker_active_partitions",
                "Partition locations being written on this worker (reserved, not yet committed).",
                activePartitions));
        out.add(new GaugeMetricFamily(
                "estuary_worker_active_shuffles",
                "Shuffles this worker holds slots or files of.",
                activeShuffles.getAsInt()));
        out.add(new GaugeMetricFamily(
                "estuary_worker_open_streams", "Fetch streams open (readers mid-partition).", openStreams.getAsInt()));
        io.estuary.worker.storage.PartitionCache cache = storage.cache();
        out.add(new CounterMetricFamily(
                "estuary_worker_cache_hits",
                "Chunk fetches served from the small-partition cache instead of disk.",
                cache.counters().hits()));
        out.add(new CounterMetricFamily(
                "estuary_worker_cache_misses",
                "Chunk fetches of partitions small enough to cache that were read from disk (not cached yet, evicted, or "
                        + "refused for want of memory).",
                cache.counters().misses()));
        out.add(new CounterMetricFamily(
                "estuary_worker_cache_evictions",
                "Partitions evicted from the cache to make room or under memory pressure.",
                cache.counters().evictions()));
        out.add(new GaugeMetricFamily(
                "estuary_worker_cache_bytes",
                "Off-heap bytes the small-partition cache holds (counted in estuary_worker_memory_held_bytes).",
                cache.bytes()));
        out.add(new GaugeMetricFamily(
                "estuary_worker_cache_entries", "Partitions held in the small-partition cache.", cache.entries()));
        out.add(new GaugeMetricFamily(
                "estuary_worker_held_copy_bytes",
                "Bytes of committed copies kept in the cache and not yet on disk: replicas held in place of their "
                        + "files, and primaries committed from memory whose write is under way (part of "
                        + "estuary_worker_cache_bytes).",
                cache.counters().heldBytes()));
        out.add(new CounterMetricFamily(
                "estuary_worker_held_copies_written",
                "Copies held in memory and then written to their files: primaries right after their commit, replicas "
                        + "when the cache needed the room or at a graceful stop.",
                cache.counters().writeBacks()));
        out.add(new GaugeMetricFamily(
                "estuary_worker_stalled_executors",
                "Flushers and network threads that have not run a probe within estuary.worker.health.stallTimeout; "
                        + "/health fails while this is above 0.",
                stalls.stalled().size()));
        return out;
    }

    /** Exports how long pushes were held to their applications' allowed rates ({@link PushHoldMetrics}). */
    public void pushHolds(java.util.function.Supplier<java.util.Map<String, Double>> held) {
        PushHoldMetrics.register(registry, held);
    }

    /** Whether the worker has paused reading pushes (any memory pressure level above NORMAL). */
    boolean paused() {
        return memory.paused();
    }

    /** What server {@code name}'s transport reports to; its connections are exported under that name. */
    public TransportObserver observer(String name) {
        Gauge.Child open = connections.labels(name);
        return new TransportObserver() {
            @Override
            public void connectionOpened() {
                open.inc();
            }

            @Override
            public void connectionClosed() {
                open.dec();
            }

            @Override
            public void pushAnswered(long bytes, long nanos, StatusCode status) {
                pushRequests.inc();
                pushSeconds.observe(nanos / 1e9);
                if (status == StatusCode.OK) pushBytes.inc(bytes);
                else refusals.labels(status.name()).inc();
            }

            @Override
            public void chunkSent(long bytes, long nanos) {
                fetchChunks.inc();
                fetchBytes.inc(bytes);
                fetchChunkSeconds.observe(nanos / 1e9);
            }

            @Override
            public void requestFailed(StatusCode status) {
                refusals.labels(status.name()).inc();
            }

            @Override
            public void authenticationFailed(AuthFailure reason) {
                authFailures.labels(reason.label()).inc();
            }

            @Override
            public void admittedUnauthenticated() {
                admittedUnchecked.inc();
            }
        };
    }

    /** One forward to a replica completed (the {@link io.estuary.worker.push.Replicator}'s listener). */
    public void replicated(long bytes, long nanos, boolean succeeded) {
        replicateSeconds.observe(nanos / 1e9);
        if (succeeded) replicateBytes.inc(bytes);
        else replicateFailures.inc();
    }

    /** Records one request refused by authorization (see {@code io.estuary.network.auth.Authorizer}). */
    public void authorizationRefused(String request, StatusCode status) {
        authorizationRefusals.labels(request, status.name()).inc();
    }

    public long authorizationRefusals(String request, StatusCode status) {
        return (long) authorizationRefusals.labels(request, status.name()).get();
    }

    /** Records time spent flushing on every disk of {@code storage}. */
    public void watchFlushes(StorageManager storage) {
        for (io.estuary.worker.storage.Disk d : storage.disks()) {
            Histogram.Child child = flushSeconds.labels(d.mountPoint());
            d.flusher().onFlush(nanos -> child.observe(nanos / 1e9));
        }
    }

    /** Open connections of server {@code name} (as given to {@link #observer}). */
    public int connections(String name) {
        return (int) connections.labels(name).get();
    }

    /** Authentication failures counted for {@code reason} (all servers of this worker). */
    public long authenticationFailures(AuthFailure reason) {
        return (long) authFailures.labels(reason.label()).get();
    }

    public CollectorRegistry registry() {
        return registry;
    }

    /**
     * A partition answered inline with its open (no stream, no chunk request): counted as one chunk sent, with its
     * bytes; its time is the open's.
     */
    public void inlineChunkSent(long bytes) {
        fetchChunks.inc();
        fetchBytes.inc(bytes);
    }
}
