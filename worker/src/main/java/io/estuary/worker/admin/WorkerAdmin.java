package io.estuary.worker.admin;

import io.estuary.common.ProtocolVersion;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.util.EstuaryException;
import io.estuary.network.server.TransportServer;
import io.estuary.server.admin.AdminAuth;
import io.estuary.server.admin.AdminHttpServer;
import io.estuary.server.admin.AdminHttpServer.Response;
import io.estuary.server.admin.AdminViews;
import io.estuary.server.tls.JdkServerTls;
import io.estuary.worker.storage.Disk;
import io.estuary.worker.storage.MemoryTracker;
import io.estuary.worker.storage.StorageManager;
import io.netty.util.concurrent.EventExecutor;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * The worker's observability: its {@link WorkerMetrics}, a {@link StallDetector} over its flushers and network
 * threads, and its HTTP endpoint on {@code estuary.worker.http.port}:
 * <ul>
 *   <li>{@code GET /metrics}: Prometheus metrics;</li>
 *   <li>{@code GET /api/status}: address, version, state, disks, memory, partitions, streams, connections (JSON);</li>
 *   <li>{@code GET /health}: 200 "ok", or 503 naming each stalled flusher or network thread;</li>
 *   <li>{@code POST /api/decommission}: stop taking new slots, let running shuffles finish and be read or expire,
 *       then exit (202; the drain runs in the background).</li>
 * </ul>
 * With authentication on, {@code POST}s (and by configuration reads, /metrics and /health) need the admin token
 * ({@link AdminAuth}). Created before the worker's servers (they report to {@link #metrics()}), started once they are up. Thread-safe.
 */
public final class WorkerAdmin implements Closeable {
    /** How often every watched executor gets a probe. */
    private static final long PROBE_INTERVAL_MS = 1000;

    private static final String[] SERVERS = {"rpc", "push", "fetch"};

    private final StorageManager storage;
    private final IntSupplier activeShuffles;
    private final IntSupplier openStreams;
    private final StallDetector stalls;
    private final WorkerMetrics metrics;
    private final String version;
    private final AdminAuth auth;
    private volatile AdminHttpServer http;
    private final JdkServerTls https; // null: plain HTTP

    /** {@code version}: the release this worker reports ({@link io.estuary.common.BuildVersion#of}). */
    public WorkerAdmin(
            EstuaryConf conf,
            String version,
            StorageManager storage,
            IntSupplier activeShuffles,
            IntSupplier openStreams) {
        this(conf, version, storage, activeShuffles, openStreams, io.estuary.common.time.Clock.system());
    }

    /** {@code clock}: what the stall detector measures probes' waits with. */
    public WorkerAdmin(
            EstuaryConf conf,
            String version,
            StorageManager storage,
            IntSupplier activeShuffles,
            IntSupplier openStreams,
            io.estuary.common.time.Clock clock) {
        this.version = version;
        this.storage = storage;
        this.activeShuffles = activeShuffles;
        this.openStreams = openStreams;
        this.stalls = new StallDetector(conf.get(WorkerConfig.HEALTH_STALL_TIMEOUT), clock);
        this.auth = AdminAuth.fromConf(conf, clock); // a missing or open token file fails the worker's start here
        // Unusable certificate files fail the start here too; reloads are timed by the wall clock, as the other ports'.
        this.https = JdkServerTls.fromConf(conf, TlsConfig.Group.ADMIN, io.estuary.common.time.Clock.system());
        this.metrics = new WorkerMetrics(version, storage, activeShuffles, openStreams, stalls);
    }

    public WorkerMetrics metrics() {
        return metrics;
    }

    /** The observer for the worker's server of that role ("rpc", "push" or "fetch"). */
    public io.estuary.network.server.TransportObserver observer(String role) {
        return metrics.observer(role);
    }

    /**
     * Watches the disks' flushers and the servers' event loops, and serves HTTP on {@code host:port}.
     * {@code address} and {@code state} are read at each status request.
     */
    public void start(
            String host,
            int port,
            Supplier<WorkerAddress> address,
            Supplier<String> state,
            Runnable decommission,
            TransportServer... servers) {
        metrics.watchFlushes(storage);
        for (Disk d : storage.disks()) stalls.watch("flusher of " + d.mountPoint(), d.flusher()::probe);
        for (TransportServer s : servers) {
            List<EventExecutor> loops = s.eventLoops();
            for (int i = 0; i < loops.size(); i++) stalls.watch(s.name() + " event loop " + i, loops.get(i));
        }
        try {
            AdminHttpServer.Builder b = AdminHttpServer.builder("worker");
            if (https != null) b.https(https.sslContext(), https::sslParameters);
            http = b.auth(auth)
                    .metrics(metrics.registry())
                    .get("/api/status", r -> Response.json(200, status(address.get(), state.get())))
                    .get("/health", r -> health())
                    .post("/api/decommission", r -> {
                        decommission.run();
                        return Response.json(202, new AdminViews.WorkerState(state.get()));
                    })
                    .start(host, port);
        } catch (IOException e) {
            throw new EstuaryException(
                    "worker HTTP endpoint cannot listen on " + host + ":" + port + " (" + WorkerConfig.HTTP_PORT.key()
                            + "): " + e.getMessage(),
                    e);
        }
        stalls.start(PROBE_INTERVAL_MS);
    }

    /** The HTTP port (the real one when 0 was asked for). */
    public int httpPort() {
        return http.port();
    }

    private Response health() {
        List<String> stalled = stalls.stalled();
        if (stalled.isEmpty()) return Response.text(200, "ok\n");
        return Response.text(503, "stalled: " + String.join(", ", stalled) + "\n");
    }

    private AdminViews.WorkerStatus status(WorkerAddress a, String state) {
        AdminViews.WorkerAddress address = a == null
                ? null
                : new AdminViews.WorkerAddress(
                        a.getHost(), a.getRpcPort(), a.getPushPort(), a.getFetchPort(), httpPort());
        List<String> stalled = stalls.stalled();
        List<AdminViews.Disk> disks = new ArrayList<>();
        long partitions = 0;
        for (DiskInfo d : storage.diskInfos()) {
            partitions += d.getActiveSlots();
            disks.add(AdminViews.Disk.of(d));
        }
        MemoryTracker memory = storage.memory();
        AdminViews.Memory mem = new AdminViews.Memory(
                memory.held(), memory.limit(), memory.peak(), memory.level().name(), metrics.paused(), memory.pauses());
        Map<String, Integer> conns = new LinkedHashMap<>();
        for (String server : SERVERS) conns.put(server, metrics.connections(server));
        return new AdminViews.WorkerStatus(
                address,
                version,
                ProtocolVersion.CURRENT,
                state,
                stalled.isEmpty(),
                stalled,
                disks,
                mem,
                partitions,
                activeShuffles.getAsInt(),
                openStreams.getAsInt(),
                conns);
    }

    @Override
    public void close() {
        stalls.close();
        if (http != null) http.close();
    }
}
