package io.estuary.worker.admin;

import static io.estuary.testing.Waits.waitFor;
import static io.estuary.worker.admin.Scrapes.sample;
import static io.estuary.worker.admin.Scrapes.samples;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.ApplicationHeartbeatRequest;
import io.estuary.common.protocol.CommitFilesRequest;
import io.estuary.common.protocol.CommitFilesResponse;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.OpenStreamRequest;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.ReserveSlotsRequest;
import io.estuary.common.protocol.StreamHandle;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.common.util.ShuffleKey;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.client.ChunkReceivedCallback;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import io.estuary.network.rpc.MasterClient;
import io.estuary.server.admin.AdminJson;
import io.estuary.server.admin.AdminViews;
import io.estuary.server.admin.MetricsDoc;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.prometheus.client.CollectorRegistry;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A real master and worker on loopback: data pushed and fetched through the worker's ports shows up, byte for byte,
 * in its /metrics; /api/status describes it; /health is ok. docs/metrics.md matches the live registries.
 */
class WorkerObservabilityTest {
    private static final String APP = "app-observed";
    private static MiniCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        // Cache off: held memory is then exactly the flush buffers (the cache's metrics have a test of their own).
        // Permissive: the test sends the application's requests by hand, never registering its secret.
        cluster = new MiniCluster(
                1,
                1,
                new EstuaryConf()
                        .set(io.estuary.common.config.AuthConfig.MODE, "permissive")
                        .set(WorkerConfig.CHUNK_SIZE, "4k")
                        .set(WorkerConfig.CACHE_ENABLED, "false"));
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) cluster.close();
    }

    @Test
    void pushedAndFetchedBytesShowInMetricsAndStatusDescribesTheWorker() throws Exception {
        Worker worker = cluster.workers().get(0);
        int http = worker.httpPort();
        try (TransportClientFactory clients = cluster.clusterClients("test")) {
            MasterClient master = new MasterClient(clients, Collections.singletonList(cluster.masterEndpoint()));
            master.ask(
                    Request.newBuilder()
                            .setApplicationHeartbeat(
                                    ApplicationHeartbeatRequest.newBuilder().setAppId(APP)),
                    Empty.parser(),
                    10_000);
            List<PartitionLocation> locs = master.ask(
                            Request.newBuilder()
                                    .setRequestSlots(RequestSlotsRequest.newBuilder()
                                            .setAppId(APP)
                                            .setShuffleId(0)
                                            .setNumPartitions(2)),
                            RequestSlotsResponse.parser(),
                            10_000)
                    .getLocationsList();
            WorkerAddress w = locs.get(0).getWorker();
            TransportClient rpc = clients.client(w.getHost(), w.getRpcPort());
            ControlClient.ask(
                    rpc,
                    Request.newBuilder()
                            .setReserveSlots(ReserveSlotsRequest.newBuilder()
                                    .setAppId(APP)
                                    .setShuffleId(0)
                                    .addAllLocations(locs)),
                    Empty.parser());

            // Pushes of random sizes to both partitions, one at a time so each partition's file is in push order.
            TransportClient push = clients.client(w.getHost(), w.getPushPort());
            String key = ShuffleKey.of(APP, 0);
            Random random = new Random(42);
            ByteArrayOutputStream[] sent = {new ByteArrayOutputStream(), new ByteArrayOutputStream()};
            int pushes = 30;
            for (int i = 0; i < pushes; i++) {
                byte[] data = new byte[200 + random.nextInt(3000)];
                random.nextBytes(data);
                int p = locs.get(i % 2).getPartitionId();
                TransportClient.await(push.pushData(key, p, 0, new NettyManagedBuffer(Unpooled.wrappedBuffer(data))))
                        .release();
                sent[p].write(data);
            }
            // One push to a location this worker does not hold: refused, and counted by its status.
            RemoteException refused = assertThrows(
                    RemoteException.class,
                    () -> TransportClient.await(
                            push.pushData(key, 0, 99, new NettyManagedBuffer(Unpooled.wrappedBuffer(new byte[10])))));
            assertEquals(StatusCode.UNKNOWN_LOCATION, refused.status());

            CommitFilesResponse committed = ControlClient.ask(
                    rpc,
                    Request.newBuilder()
                            .setCommitFiles(CommitFilesRequest.newBuilder()
                                    .setAppId(APP)
                                    .setShuffleId(0)
                                    .addAllLocations(locs)),
                    CommitFilesResponse.parser());
            assertEquals(2, committed.getCommittedCount());

            TransportClient fetch = clients.client(w.getHost(), w.getFetchPort());
            long fetchedBytes = 0;
            int chunks = 0;
            for (int p = 0; p < 2; p++) {
                StreamHandle h = ControlClient.ask(
                        fetch,
                        Request.newBuilder()
                                .setOpenStream(OpenStreamRequest.newBuilder()
                                        .setAppId(APP)
                                        .setShuffleId(0)
                                        .setPartitionId(p)
                                        .setEpoch(0)),
                        StreamHandle.parser());
                assertTrue(h.getNumChunks() > 1, "chunks of 4k: several per partition");
                ByteArrayOutputStream got = new ByteArrayOutputStream();
                for (int c = 0; c < h.getNumChunks(); c++) got.write(fetchChunk(fetch, h.getStreamId(), c));
                assertEquals(sent[p].size(), got.size(), "partition " + p + " bytes");
                assertEquals(crc(sent[p].toByteArray()), crc(got.toByteArray()), "partition " + p + " checksum");
                fetchedBytes += got.size();
                chunks += h.getNumChunks();
            }
            long pushedBytes = sent[0].size() + sent[1].size();
            assertEquals(pushedBytes, fetchedBytes);

            // A chunk's metrics are recorded once the server has written it, which may be just after the client has it.
            int expectedChunks = chunks;
            waitFor(
                    () -> samples(Scrapes.getOrFail(http, "/metrics").body).get("estuary_worker_fetch_chunks_total")
                            == expectedChunks,
                    60_000,
                    "every chunk sent is counted");
            Scrapes.Reply scrape = Scrapes.get(http, "/metrics");
            assertEquals(200, scrape.code);
            Map<String, Double> m = samples(scrape.body);
            assertEquals(pushedBytes, sample(m, "estuary_worker_push_bytes_total"));
            assertEquals(pushes + 1, sample(m, "estuary_worker_push_requests_total"));
            assertEquals(pushes + 1, sample(m, "estuary_worker_push_seconds_count"));
            assertEquals(fetchedBytes, sample(m, "estuary_worker_fetch_bytes_total"));
            assertEquals(chunks, sample(m, "estuary_worker_fetch_chunk_seconds_count"));
            assertEquals(1, sample(m, "estuary_worker_refusals_total{status=\"UNKNOWN_LOCATION\"}"));
            assertEquals(0, sample(m, "estuary_worker_refusals_total{status=\"RETRY_LATER\"}"));
            assertEquals(0, sample(m, "estuary_worker_replicate_bytes_total"));
            String mount = cluster.root().resolve("worker0-disk0").toFile().getAbsolutePath();
            assertEquals(1, sample(m, "estuary_worker_disk_status{mount=\"" + mount + "\",status=\"DISK_HEALTHY\"}"));
            assertEquals(0, sample(m, "estuary_worker_disk_status{mount=\"" + mount + "\",status=\"DISK_FAILED\"}"));
            assertTrue(
                    sample(m, "estuary_worker_flush_seconds_count{mount=\"" + mount + "\"}") >= 2,
                    "both files flushed");
            assertTrue(sample(m, "estuary_worker_connections{server=\"push\"}") >= 1);
            assertTrue(sample(m, "estuary_worker_connections{server=\"fetch\"}") >= 1);
            assertEquals(0, sample(m, "estuary_worker_memory_held_bytes"), "committed: nothing left in memory");
            assertEquals(1L << 30, sample(m, "estuary_worker_memory_limit_bytes"));
            assertEquals(0, sample(m, "estuary_worker_memory_paused"));
            assertEquals(0, sample(m, "estuary_worker_active_partitions"), "both locations committed");
            assertEquals(1, sample(m, "estuary_worker_active_shuffles"));
            assertEquals(0, sample(m, "estuary_worker_open_streams"), "every stream read to its end");
            assertEquals(0, sample(m, "estuary_worker_cache_hits_total"));

            AdminViews.WorkerStatus status =
                    AdminJson.read(Scrapes.get(http, "/api/status").body, AdminViews.WorkerStatus.class);
            AdminViews.WorkerAddress address = status.address();
            assertEquals("127.0.0.1", address.host());
            assertEquals(w.getPushPort(), address.pushPort());
            assertEquals(http, address.httpPort());
            assertEquals("ACTIVE", status.state());
            assertTrue(status.healthy());
            List<AdminViews.Disk> disks = status.disks();
            assertEquals(1, disks.size());
            AdminViews.Disk disk = disks.get(0);
            assertEquals(mount, disk.mountPoint());
            assertEquals("DISK_HEALTHY", disk.status());
            assertTrue(disk.usableBytes() > 0);
            assertEquals(0, disk.activeSlots());
            AdminViews.Memory memory = status.memory();
            assertEquals(1L << 30, memory.limitBytes());
            assertFalse(memory.paused());
            assertEquals(1, status.activeShuffles());
            assertEquals(0, status.openStreams());
            assertTrue(status.connections().get("push") >= 1);

            Scrapes.Reply health = Scrapes.get(http, "/health");
            assertEquals(200, health.code, health.body);
            assertEquals("ok\n", health.body);
            assertEquals(404, Scrapes.get(http, "/nope").code);

            // Decommission through the worker's own endpoint: it drains (the shuffle it holds keeps it from exiting).
            Scrapes.Reply dec = Scrapes.post(http, "/api/decommission");
            assertEquals(202, dec.code, dec.body);
            assertEquals(
                    io.estuary.common.protocol.WorkerState.WORKER_DECOMMISSIONING,
                    cluster.workers().get(0).state());
            assertEquals(
                    "DECOMMISSIONING",
                    AdminJson.read(Scrapes.get(http, "/api/status").body, AdminViews.WorkerStatus.class)
                            .state());
        }
    }

    private static byte[] fetchChunk(TransportClient c, long stream, int index) throws Exception {
        CompletableFuture<byte[]> f = new CompletableFuture<>();
        c.fetchChunk(stream, index, new ChunkReceivedCallback() {
            @Override
            public void onSuccess(int i, ByteBuf chunk) {
                byte[] b = new byte[chunk.readableBytes()];
                chunk.readBytes(b);
                chunk.release();
                f.complete(b);
            }

            @Override
            public void onFailure(int i, Throwable cause) {
                f.completeExceptionally(cause);
            }
        });
        return f.get(60, java.util.concurrent.TimeUnit.SECONDS);
    }

    private static long crc(byte[] b) {
        CRC32 c = new CRC32();
        c.update(b);
        return c.getValue();
    }

    @Test
    void bothServersExportTheJvmsGarbageCollectionsMemoryBufferPoolsAndThreads() throws Exception {
        String worker = Scrapes.getOrFail(cluster.workers().get(0).httpPort(), "/metrics").body;
        String master = io.estuary.server.admin.PrometheusText.scrape(
                cluster.master().metrics().registry());
        for (String scrape : new String[] {worker, master}) {
            assertTrue(scrape.contains("jvm_gc_collection_seconds_count{gc=\""), scrape);
            assertTrue(scrape.contains("jvm_buffer_pool_used_bytes{pool=\"direct\",}"), scrape);
            assertTrue(scrape.contains("jvm_memory_bytes_used{area=\"heap\",}"), scrape);
            assertTrue(scrape.contains("jvm_memory_pool_bytes_used{pool=\""), scrape);
            assertTrue(scrape.contains("jvm_threads_current "), scrape);
        }
    }

    @Test
    void authenticationFailuresAreExportedByReasonOnBothServers() throws Exception {
        WorkerMetrics worker = cluster.workers().get(0).admin().metrics();
        io.estuary.master.admin.MasterMetrics master = cluster.master().metrics();
        io.estuary.network.auth.AuthFailure wrong = io.estuary.network.auth.AuthFailure.WRONG_PROOF;
        long workerBefore = worker.authenticationFailures(wrong);
        long masterBefore = master.authenticationFailures(wrong);
        worker.observer("push").authenticationFailed(wrong);
        worker.observer("push").admittedUnauthenticated();
        master.observer().authenticationFailed(wrong);
        assertEquals(workerBefore + 1, worker.authenticationFailures(wrong));
        assertEquals(masterBefore + 1, master.authenticationFailures(wrong));
        String w = io.estuary.server.admin.PrometheusText.scrape(worker.registry());
        assertTrue(w.contains("estuary_worker_authentication_failures_total{reason=\"wrong_proof\",}"), w);
        assertTrue(w.contains("estuary_worker_authentication_failures_total{reason=\"cut\",}"), "every reason");
        assertTrue(w.contains("estuary_worker_unauthenticated_admitted_total"), w);
        String m = io.estuary.server.admin.PrometheusText.scrape(master.registry());
        assertTrue(m.contains("estuary_master_authentication_failures_total{reason=\"wrong_proof\",}"), m);
    }

    /**
     * docs/metrics.md is generated from the registries of a running master and worker; with
     * {@code -Destuary.metrics.doc.write=true} (build/gen-metrics-docs.sh) this test writes it instead of checking it.
     */
    @Test
    void metricsDocMatchesTheRegistries() throws Exception {
        Map<String, CollectorRegistry> sections = new LinkedHashMap<>();
        sections.put("Master", cluster.master().metrics().registry());
        sections.put("Worker", cluster.workers().get(0).admin().metrics().registry());
        String doc = MetricsDoc.render(sections);
        Path file = Paths.get("..", "docs", "metrics.md");
        if (Boolean.getBoolean("estuary.metrics.doc.write")) {
            Files.write(file, doc.getBytes(StandardCharsets.UTF_8));
        }
        assertTrue(Files.exists(file), "docs/metrics.md is missing: run build/gen-metrics-docs.sh");
        assertEquals(
                doc,
                new String(Files.readAllBytes(file), StandardCharsets.UTF_8),
                "docs/metrics.md differs from the metric registries: run build/gen-metrics-docs.sh");
        for (String name : MetricsDoc.names(sections.get("Worker"))) assertTrue(doc.contains("`" + name + "`"), name);
    }
}
