package io.estuary.tests;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import io.estuary.cli.CliViews;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.WorkerState;
import io.estuary.master.Master;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.MasterClient;
import io.estuary.server.admin.AdminJson;
import io.estuary.server.admin.AdminViews;
import io.estuary.testing.process.FreePorts;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The operator's surface against a real cluster on loopback (three Raft masters, three workers, and a fourth worker
 * that reports another version, as in the middle of a rolling upgrade): the Grafana dashboard queries only metrics
 * the servers export, and {@code bin/estuary} (run in-process, and once through the launcher script) drives every
 * admin call, with tables, JSON, leader following and failures.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OperationsTest {
    private static final String NEXT_VERSION = "9.9.9-upgrade";
    private MiniCluster cluster;
    private MiniCluster upgraded;
    private TransportClientFactory clients;
    private MasterClient master;
    private String masters;
    private Path tokenFile;
    private static final String ADMIN_TOKEN =
            io.estuary.testing.ClusterSecrets.adminToken(io.estuary.testing.ClusterSecrets.shared());

    @BeforeAll
    void start() throws Exception {
        // Permissive: the test asks slots for an application by hand, which then registers without a secret.
        EstuaryConf auth = io.estuary.testing.ClusterSecrets.enable(
                        new EstuaryConf(), io.estuary.testing.ClusterSecrets.shared())
                .set(io.estuary.common.config.AuthConfig.MODE, "permissive");
        // An election timeout above MiniCluster's 300 ms: a stall of a loaded machine must not move the leadership
        // the test captured (it moves it only by transfer).
        cluster = new MiniCluster(3, 3, 1, auth.copy().set(MasterConfig.HA_ELECTION_TIMEOUT, "1500ms"));
        upgraded = MiniCluster.withExternalMasters(
                cluster.masterEndpoint(), 1, auth.copy().set(NetworkConfig.VERSION_OVERRIDE, NEXT_VERSION));
        cluster.awaitWorkers(4);
        List<String> http = new ArrayList<>();
        for (int i = 0; i < 3; i++) http.add("127.0.0.1:" + cluster.master(i).httpPort());
        masters = String.join(",", http);
        // The harness authenticates (the default): this test acts for the servers, and its admin calls carry the
        // token the servers derive from their cluster secret.
        clients = cluster.clusterClients("operations-test");
        tokenFile = Files.createTempFile("estuary-admin", ".token");
        Files.setPosixFilePermissions(tokenFile, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        Files.write(tokenFile, ADMIN_TOKEN.getBytes(StandardCharsets.US_ASCII));
        master =
                new MasterClient(clients, Arrays.asList(cluster.masterEndpoint().split(",")));
    }

    @AfterAll
    void stop() throws Exception {
        if (clients != null) clients.close();
        if (upgraded != null) upgraded.close();
        if (cluster != null) cluster.close();
        if (tokenFile != null) Files.deleteIfExists(tokenFile);
    }

    /** Every metric name a dashboard query mentions is in a live master's or worker's scrape. */
    @Test
    void dashboardQueriesOnlyExportedMetrics() throws Exception {
        Set<String> exported = new HashSet<>();
        exported.addAll(sampleNames(get(cluster.master().httpPort(), "/metrics")));
        exported.addAll(sampleNames(get(cluster.workers().get(0).httpPort(), "/metrics")));
        JsonNode dashboard = AdminJson.tree(new String(
                Files.readAllBytes(repo().resolve("charts/estuary/dashboards/estuary-dashboard.json")),
                StandardCharsets.UTF_8));
        List<String> queries = new ArrayList<>();
        collectQueries(dashboard, queries);
        assertTrue(queries.size() >= 20, "the dashboard has " + queries.size() + " queries");
        Set<String> used = new TreeSet<>();
        Pattern name = Pattern.compile("\\bestuary_[a-zA-Z0-9_]+");
        for (String q : queries) {
            Matcher m = name.matcher(q);
            while (m.find()) used.add(m.group());
        }
        Set<String> missing = new TreeSet<>(used);
        missing.removeAll(exported);
        assertTrue(missing.isEmpty(), "the dashboard queries metrics no server exports: " + missing);
        for (String needed : Arrays.asList(
                "estuary_master_is_leader",
                "estuary_master_term",
                "estuary_master_workers",
                "estuary_master_slot_requests_total",
                "estuary_worker_memory_paused",
                "estuary_worker_push_bytes_total",
                "estuary_worker_fetch_chunk_seconds_bucket",
                "estuary_worker_disk_status",
                "estuary_worker_refusals_total",
                "estuary_build_info")) {
            assertTrue(used.contains(needed), "the dashboard does not show " + needed);
        }
    }

    /** Masters and workers report their version in /api/status and as estuary_build_info; an override wins. */
    @Test
    void everyServerReportsItsVersion() throws Exception {
        String built = io.estuary.common.BuildVersion.built();
        assertNotEquals("unknown", built, "estuary-version.properties is filtered by Maven");
        for (int i = 0; i < 3; i++) {
            int port = cluster.master(i).httpPort();
            assertEquals(
                    built,
                    view(get(port, "/api/status"), AdminViews.MasterStatus.class)
                            .version());
            assertTrue(get(port, "/metrics")
                    .contains("estuary_build_info{server=\"master\",version=\"" + built + "\",} 1.0"));
        }
        Worker next = upgraded.workers().get(0);
        assertEquals(
                NEXT_VERSION,
                view(get(next.httpPort(), "/api/status"), AdminViews.WorkerStatus.class)
                        .version());
        assertTrue(get(next.httpPort(), "/metrics")
                .contains("estuary_build_info{server=\"worker\",version=\"" + NEXT_VERSION + "\",} 1.0"));
        assertEquals(
                built,
                view(get(cluster.workers().get(0).httpPort(), "/api/status"), AdminViews.WorkerStatus.class)
                        .version());
    }

    @Test
    void cliDrivesEveryAdminCall() throws Exception {
        String app = "cli-app";
        ask(slots(app, 0, 6));
        Master leader = cluster.master();
        int leaderIndex = cluster.awaitLeader();

        // status: table and JSON; the fourth worker runs another version.
        CliRun status = cli("status");
        assertEquals(0, status.code, status.err);
        assertTrue(status.out.contains("leader:       m" + leaderIndex), status.out);
        assertTrue(status.out.contains("WARNING: nodes run different versions"), status.out);
        assertTrue(status.out.contains(NEXT_VERSION), status.out);
        CliViews.ClusterStatus st = view(cli("--json", "status").out, CliViews.ClusterStatus.class);
        assertEquals("m" + leaderIndex, st.leader());
        assertTrue(st.mixedVersions());
        assertEquals(4, st.workers());
        assertEquals(1, st.applications());

        // masters: every master with its role, term and version.
        CliRun ms = cli("masters");
        assertEquals(0, ms.code, ms.err);
        assertTrue(ms.out.startsWith("ID"), ms.out);
        List<CliViews.MasterRow> masterRows =
                view(cli("--json", "masters").out, CliViews.MasterRows.class).masters();
        assertEquals(3, masterRows.size());
        int leaders = 0;
        for (CliViews.MasterRow m : masterRows) {
            if ("leader".equals(m.role())) leaders++;
            assertEquals(leader.version(), m.version());
            assertEquals(leader.log().term(), m.term());
            assertNotNull(m.http());
        }
        assertEquals(1, leaders);

        // workers: with disks and versions; the table warns about the mixed versions.
        CliRun ws = cli("workers");
        assertEquals(0, ws.code, ws.err);
        assertTrue(ws.out.contains("DISK STATUS") && ws.out.contains("HEALTHY"), ws.out);
        assertTrue(ws.out.contains("WARNING: nodes run different versions"), ws.out);
        List<AdminViews.Worker> workers =
                view(cli("--json", "workers").out, AdminViews.Workers.class).workers();
        assertEquals(4, workers.size());
        Set<Object> versions = new HashSet<>();
        for (AdminViews.Worker w : workers) {
            versions.add(w.version());
            assertEquals(1, w.disks().size());
        }
        assertEquals(new HashSet<>(Arrays.asList(leader.version(), NEXT_VERSION)), versions);

        // apps and shuffles.
        CliRun apps = cli("apps");
        assertTrue(apps.out.contains(app), apps.out);
        assertEquals(
                app,
                view(cli("--json", "apps").out, AdminViews.Applications.class)
                        .applications()
                        .get(0)
                        .id());
        CliRun sh = cli("shuffles", app);
        assertEquals(0, sh.code, sh.err);
        assertTrue(sh.out.contains("PARTITIONS"), sh.out);
        AdminViews.ShuffleDetail shuffle = view(cli("--json", "shuffles", app).out, AdminViews.Shuffles.class)
                .applications()
                .get(0)
                .shuffles()
                .get(0);
        assertEquals(0, shuffle.id());
        assertEquals(6, shuffle.partitions());
        assertFalse(shuffle.workers().isEmpty());
        assertEquals(0, cli("shuffles").code);

        // exclude (by host:rpcPort) on the leader, whatever master the list names first; the worker gets no new slots.
        Worker w0 = cluster.workers().get(0);
        String w0id = workerId(w0);
        CliRun ex = cli(
                "--master", reversed(), "exclude", "127.0.0.1:" + w0.address().getRpcPort());
        assertEquals(0, ex.code, ex.err);
        assertTrue(ex.out.contains(w0id + " is now EXCLUDED"), ex.out);
        waitFor(
                () -> {
                    for (int i = 0; i < 3; i++) {
                        if (cluster.master(i).state(s -> s.workerState(w0id)) != WorkerState.WORKER_EXCLUDED)
                            return false;
                    }
                    return true;
                },
                "every master knows the exclusion");
        for (PartitionLocation l : ask(slots(app, 1, 12)).getLocationsList()) {
            assertNotEquals(w0id, io.estuary.master.state.WorkerId.of(l.getWorker()), "an excluded worker got a slot");
        }
        assertTrue(cli("workers").out.contains("EXCLUDED"));
        CliRun act = cli("--json", "activate", w0id);
        assertEquals(0, act.code, act.err);
        assertEquals("ACTIVE", view(act.out, AdminViews.WorkerStateSet.class).state());
        assertEquals(WorkerState.WORKER_ACTIVE, cluster.master().state(s -> s.workerState(w0id)));
        Set<String> placed = new HashSet<>();
        for (PartitionLocation l : ask(slots(app, 2, 12)).getLocationsList()) {
            placed.add(io.estuary.master.state.WorkerId.of(l.getWorker()));
        }
        assertTrue(placed.contains(w0id), "an activated worker gets slots again: " + placed);

        // decommission through the master: the worker learns it at its next heartbeat and drains.
        Worker w2 = cluster.workers().get(2);
        CliRun dec = cli("decommission", workerId(w2));
        assertEquals(0, dec.code, dec.err);
        assertTrue(dec.out.contains("is now DECOMMISSIONING"), dec.out);
        waitFor(() -> w2.state() == WorkerState.WORKER_DECOMMISSIONING, "the worker drains");

        // leadership transfer, then the CLI follows the new leader.
        int next = (leaderIndex + 1) % 3;
        CliRun tr = cli("transfer-leadership", "m" + next);
        assertEquals(0, tr.code, tr.err);
        assertTrue(tr.out.contains("m" + next + " leads now"), tr.out);
        assertTrue(cluster.master(next).isLeader());
        assertEquals(
                "m" + next,
                view(cli("--json", "status").out, CliViews.ClusterStatus.class).leader());
        CliRun ex2 = cli("exclude", workerId(cluster.workers().get(1)));
        assertEquals(0, ex2.code, ex2.err);
        assertEquals(0, cli("activate", workerId(cluster.workers().get(1))).code);

        // failures: a clear message and a non-zero exit.
        CliRun unknown = cli("exclude", "10.9.9.9:1");
        assertEquals(1, unknown.code);
        assertTrue(unknown.err.contains("unknown worker '10.9.9.9:1'"), unknown.err);
        CliRun noApp = cli("shuffles", "no-such-app");
        assertEquals(1, noApp.code);
        assertTrue(noApp.err.contains("no registered application no-such-app"), noApp.err);
        CliRun noMaster = cli("transfer-leadership", "m9");
        assertEquals(1, noMaster.code);
        assertTrue(noMaster.err.contains("no master 'm9'"), noMaster.err);
        CliRun usage = cli("frobnicate");
        assertEquals(2, usage.code);
        assertTrue(usage.err.contains("unknown command 'frobnicate'") && usage.err.contains("usage:"), usage.err);
        CliRun down = cli("--master", "127.0.0.1:" + FreePorts.take(1)[0], "workers");
        assertEquals(3, down.code);
        assertTrue(down.err.contains("no master answered"), down.err);

        // The admin API itself: a follower answers reads, and refuses changes naming the leader.
        int follower = (next + 1) % 3;
        String fw = get(cluster.master(follower).httpPort(), "/api/workers");
        assertEquals("follower", view(fw, AdminViews.Workers.class).servedBy().role());
        HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:"
                        + cluster.master(follower).httpPort() + "/api/workers/exclude?id=" + workerId(w0))
                .openConnection();
        c.setRequestMethod("POST");
        c.setRequestProperty("Authorization", "Bearer " + ADMIN_TOKEN);
        assertEquals(421, c.getResponseCode());
        try (InputStream in = c.getErrorStream()) {
            assertEquals(
                    "m" + next,
                    view(new String(in.readAllBytes(), StandardCharsets.UTF_8), AdminViews.NotLeader.class)
                            .leaderId());
        }

        // The launcher script, as an operator runs it.
        Path script = repo().resolve("bin/estuary");
        ProcessBuilder pb = new ProcessBuilder(
                        "bash",
                        script.toString(),
                        "--token-file",
                        tokenFile.toString(),
                        "--master",
                        masters,
                        "--json",
                        "masters")
                .redirectErrorStream(false);
        pb.environment()
                .put(
                        "ESTUARY_CLASSPATH",
                        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        assertEquals(3, view(out, CliViews.MasterRows.class).masters().size());
    }

    // ---- helpers ----

    private CliRun cli(String... args) {
        List<String> all = new ArrayList<>(Arrays.asList("--token-file", tokenFile.toString()));
        if (!Arrays.asList(args).contains("--master")) {
            all.add("--master");
            all.add(masters);
        }
        all.addAll(Arrays.asList(args));
        return CliRun.logged(all.toArray(new String[0]));
    }

    /** The masters' HTTP addresses, last first, so the first one asked is usually not the leader. */
    private String reversed() {
        List<String> l = new ArrayList<>(Arrays.asList(masters.split(",")));
        java.util.Collections.reverse(l);
        return String.join(",", l);
    }

    private static String workerId(Worker w) {
        return io.estuary.master.state.WorkerId.of(w.address());
    }

    private RequestSlotsResponse ask(Request.Builder r) throws Exception {
        return master.ask(r, RequestSlotsResponse.parser(), 30_000);
    }

    private static Request.Builder slots(String app, int shuffle, int partitions) {
        return Request.newBuilder()
                .setRequestSlots(RequestSlotsRequest.newBuilder()
                        .setAppId(app)
                        .setShuffleId(shuffle)
                        .setNumPartitions(partitions));
    }

    private static Path repo() {
        Path p = Paths.get("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("charts/estuary/dashboards/estuary-dashboard.json")))
            p = p.getParent();
        if (p == null)
            throw new IllegalStateException(
                    "repository root not found above " + Paths.get("").toAbsolutePath());
        return p;
    }

    /** Every PromQL string of the dashboard: panel targets' expr and template variables' queries. */
    private static void collectQueries(JsonNode node, List<String> out) {
        if (node.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                if ((e.getKey().equals("expr")
                                || e.getKey().equals("query")
                                || e.getKey().equals("definition"))
                        && e.getValue().isTextual()) {
                    out.add(e.getValue().asText());
                } else {
                    collectQueries(e.getValue(), out);
                }
            }
        } else if (node.isArray()) {
            for (JsonNode o : node) collectQueries(o, out);
        }
    }

    /** Names of the samples in a Prometheus text scrape (histograms give their _bucket, _sum, _count). */
    private static Set<String> sampleNames(String scrape) {
        Set<String> out = new HashSet<>();
        for (String line : scrape.split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) continue;
            int end = 0;
            while (end < line.length() && line.charAt(end) != '{' && line.charAt(end) != ' ') end++;
            out.add(line.substring(0, end));
        }
        return out;
    }

    private static String get(int port, String path) throws Exception {
        HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:" + port + path).openConnection();
        c.setRequestProperty("Authorization", "Bearer " + ADMIN_TOKEN);
        assertEquals(200, c.getResponseCode(), path);
        try (InputStream in = c.getInputStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** An admin answer or CLI output read as the view it declares to be. */
    private static <T> T view(String json, Class<T> view) {
        return AdminJson.read(json, view);
    }
}
