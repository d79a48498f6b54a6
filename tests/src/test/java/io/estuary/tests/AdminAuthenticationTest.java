package io.estuary.tests;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.WorkerState;
import io.estuary.master.Master;
import io.estuary.server.admin.AdminAuth;
import io.estuary.server.admin.AdminJson;
import io.estuary.server.admin.AdminToken;
import io.estuary.server.admin.AdminViews;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.Logger;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The admin HTTP APIs of a real master and worker on loopback with {@code estuary.auth.enabled=true} and the admin
 * token derived from the cluster secret: every change without the token is refused 401 and changes nothing, with it
 * goes through; reads follow {@code protectReads} (on by default), {@code /metrics} and {@code /health} stay open;
 * {@code bin/estuary} (in-process and through the launcher script) sends the token from {@code --token-file}, from
 * {@code $ESTUARY_ADMIN_TOKEN_FILE} and derived from the configuration's cluster secret, and says what to do without
 * it. Neither the token nor the secret shows in any answer, CLI output or log line.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdminAuthenticationTest {
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final Capture logs = new Capture();
    private Path dir;
    private byte[] secret;
    private Path secretFile;
    private String token;
    private Path tokenFile;
    private MiniCluster cluster;
    private String master;

    /** Keeps every line logged under io.estuary while the cluster runs. */
    private static final class Capture extends AbstractAppender {
        final List<String> lines = new CopyOnWriteArrayList<>();

        Capture() {
            super("admin-auth-capture", null, null, true, Property.EMPTY_ARRAY);
        }

        @Override
        public void append(LogEvent event) {
            lines.add(event.getMessage().getFormattedMessage()
                    + (event.getThrown() == null ? "" : " " + event.getThrown()));
        }
    }

    @BeforeAll
    void start() throws Exception {
        logs.start();
        ((Logger) LogManager.getLogger("io.estuary")).addAppender(logs);
        dir = Files.createTempDirectory("estuary-admin-auth");
        // As `bin/estuary secret generate` writes it: base64 of 32 random bytes.
        String encoded = io.estuary.server.auth.ClusterSecret.generate();
        secret = java.util.Base64.getDecoder().decode(encoded);
        secretFile = ownerOnly(dir.resolve("cluster.secret"), encoded.getBytes(StandardCharsets.US_ASCII));
        token = AdminToken.derivedFrom(secretFile, "test").value();
        tokenFile = ownerOnly(dir.resolve("admin.token"), token.getBytes(StandardCharsets.UTF_8));
        cluster = new MiniCluster(
                1,
                1,
                new EstuaryConf()
                        .set(AuthConfig.ENABLED, "true")
                        .set(AuthConfig.CLUSTER_SECRET_FILE, secretFile.toString()));
        master = "127.0.0.1:" + cluster.master().httpPort();
    }

    @AfterAll
    void stop() throws Exception {
        try {
            if (cluster != null) cluster.close();
        } finally {
            ((Logger) LogManager.getLogger("io.estuary")).removeAppender(logs);
        }
    }

    @Test
    void changesNeedTheTokenReadsFollowProtectReadsMetricsAndHealthStayOpen() throws Exception {
        Master m = cluster.master();
        Worker w = cluster.workers().get(0);
        String id = io.estuary.master.state.WorkerId.of(w.address());
        int mp = m.httpPort();
        int wp = w.httpPort();

        // Every change without the token (or with another) is refused and changes nothing.
        for (String action : Arrays.asList("exclude", "decommission", "activate")) {
            for (String auth : Arrays.asList(null, "Bearer not-the-token-at-all", "Basic " + token)) {
                HttpResponse<String> r = call(mp, "POST", "/api/workers/" + action + "?id=" + id, auth);
                assertEquals(401, r.statusCode(), action + " with " + auth);
                assertTrue(error(r).contains("admin token"), r.body());
                assertFalse(r.body().contains(token), r.body());
            }
        }
        assertEquals(WorkerState.WORKER_ACTIVE, m.state(s -> s.workerState(id)));
        assertEquals(
                401, call(mp, "POST", "/api/leadership/transfer?to=m1", null).statusCode());
        HttpResponse<String> decommission = call(wp, "POST", "/api/decommission", null);
        assertEquals(401, decommission.statusCode());
        assertTrue(error(decommission).contains("POST /api/decommission needs an admin token"), decommission.body());
        assertEquals(WorkerState.WORKER_ACTIVE, w.state(), "a refused decommission leaves the worker serving");

        // Reads need it too (protectReads defaults to true); scrapers and probes do not.
        for (String path : Arrays.asList("/api/status", "/api/workers", "/api/applications", "/api/masters")) {
            assertEquals(401, call(mp, "GET", path, null).statusCode(), path);
            assertEquals(200, call(mp, "GET", path, "Bearer " + token).statusCode(), path);
        }
        assertEquals(401, call(wp, "GET", "/api/status", null).statusCode());
        assertEquals(200, call(mp, "GET", "/metrics", null).statusCode());
        assertEquals(200, call(wp, "GET", "/metrics", null).statusCode());
        assertEquals(200, call(wp, "GET", "/health", null).statusCode());

        // With the token, a change goes through.
        HttpResponse<String> ex = call(mp, "POST", "/api/workers/exclude?id=" + id, "Bearer " + token);
        assertEquals(200, ex.statusCode(), ex.body());
        assertEquals(WorkerState.WORKER_EXCLUDED, m.state(s -> s.workerState(id)));
        assertEquals(
                200,
                call(mp, "POST", "/api/workers/activate?id=" + id, "Bearer " + token)
                        .statusCode());
        assertEquals(WorkerState.WORKER_ACTIVE, m.state(s -> s.workerState(id)));

        // Refusals are counted on each server; the answers hold neither token nor secret.
        String scrape = call(mp, "GET", "/metrics", null).body();
        assertTrue(scrape.contains(AdminAuth.REFUSALS + "{reason=\"missing\",}"), scrape);
        assertTrue(
                m.metrics().registry().getSampleValue(AdminAuth.REFUSALS, new String[] {"reason"}, new String[] {"wrong"
                        })
                        >= 3);
        assertTrue(call(wp, "GET", "/metrics", null).body().contains(AdminAuth.REFUSALS + "{reason=\"missing\",} "));
        for (HttpResponse<String> r : Arrays.asList(
                call(mp, "GET", "/api/status", "Bearer " + token), call(wp, "GET", "/api/status", "Bearer " + token))) {
            assertNoSecret(r.body());
        }
        waitFor(() -> logs.lines.stream().anyMatch(l -> l.contains("Refused admin call")), "a WARN for the refusals");
        assertTrue(
                logs.lines.stream().anyMatch(l -> l.contains("Refused admin call") && l.contains("127.0.0.1")),
                "the WARN names the peer");
        for (String line : logs.lines) assertNoSecret(line);
    }

    @Test
    void theCliSendsTheTokenAndSaysWhatToDoWithoutIt() throws Exception {
        CliRun none = cli("--master", master, "workers");
        assertEquals(1, none.code, none.out + none.err);
        assertTrue(
                none.err.contains("the master at " + master + " requires an admin token: pass --token-file or set "
                        + AuthConfig.ADMIN_TOKEN_FILE.key()),
                none.err);

        Path wrongFile =
                ownerOnly(dir.resolve("wrong.token"), "a-wrong-token-0123456789".getBytes(StandardCharsets.UTF_8));
        CliRun wrong = cli("--master", master, "--token-file", wrongFile.toString(), "exclude", workerId());
        assertEquals(1, wrong.code, wrong.err);
        assertTrue(wrong.err.contains("requires an admin token") && wrong.err.contains("was refused"), wrong.err);
        assertEquals(WorkerState.WORKER_ACTIVE, cluster.master().state(s -> s.workerState(workerId())));

        Path open = dir.resolve("open.token");
        Files.write(open, token.getBytes(StandardCharsets.UTF_8));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
        CliRun refusedFile = cli("--master", master, "--token-file", open.toString(), "workers");
        assertEquals(2, refusedFile.code, refusedFile.err);
        assertTrue(refusedFile.err.contains("readable by its owner only"), refusedFile.err);

        CliRun ws = cli("--master", master, "--token-file", tokenFile.toString(), "--json", "workers");
        assertEquals(0, ws.code, ws.err);
        assertEquals(
                1, AdminJson.read(ws.out, AdminViews.Workers.class).workers().size());
        CliRun ex = cli("--master", master, "--token-file=" + tokenFile, "exclude", workerId());
        assertEquals(0, ex.code, ex.err);
        assertEquals(WorkerState.WORKER_EXCLUDED, cluster.master().state(s -> s.workerState(workerId())));
        CliRun act = cli("--master", master, "--token-file", tokenFile.toString(), "activate", workerId());
        assertEquals(0, act.code, act.err);
        assertEquals(WorkerState.WORKER_ACTIVE, cluster.master().state(s -> s.workerState(workerId())));
        CliRun status = cli("--master", master, "--token-file", tokenFile.toString(), "status");
        assertEquals(0, status.code, status.err);
        for (CliRun r : Arrays.asList(none, wrong, refusedFile, ws, ex, act, status)) {
            assertNoSecret(r.out);
            assertNoSecret(r.err);
        }

        // The launcher script: the token derived from the cluster secret named in $ESTUARY_CONF_DIR's file, then
        // from $ESTUARY_ADMIN_TOKEN_FILE; and without either, the message.
        Path conf = Files.createDirectories(dir.resolve("conf"));
        Files.write(
                conf.resolve("estuary-defaults.conf"),
                ("estuary.auth.enabled=true\nestuary.auth.cluster.secretFile=" + secretFile + "\n")
                        .getBytes(StandardCharsets.UTF_8));
        CliRun derived = script(Map.of("ESTUARY_CONF_DIR", conf.toString()), "--json", "masters");
        assertEquals(0, derived.code, derived.err);
        CliRun fromEnv = script(
                Map.of(
                        "ESTUARY_CONF_DIR",
                        dir.resolve("no-conf").toString(),
                        "ESTUARY_ADMIN_TOKEN_FILE",
                        tokenFile.toString()),
                "workers");
        assertEquals(0, fromEnv.code, fromEnv.err);
        assertTrue(fromEnv.out.contains(workerId()), fromEnv.out);
        CliRun without =
                script(Map.of("ESTUARY_CONF_DIR", dir.resolve("no-conf").toString()), "workers");
        assertEquals(1, without.code, without.out + without.err);
        assertTrue(without.err.contains("requires an admin token"), without.err);
        for (CliRun r : Arrays.asList(derived, fromEnv, without)) {
            assertNoSecret(r.out);
            assertNoSecret(r.err);
        }
    }

    // ---- helpers ----

    private String workerId() {
        return io.estuary.master.state.WorkerId.of(cluster.workers().get(0).address());
    }

    /** Neither the token nor the cluster secret (raw, hex or base64) is in {@code text}. */
    private void assertNoSecret(String text) {
        assertFalse(text.contains(token), "the admin token leaked: " + text);
        assertFalse(text.contains(new String(secret, StandardCharsets.ISO_8859_1)), "the secret leaked: " + text);
        assertFalse(text.contains(Base64.getEncoder().encodeToString(secret)), "the secret leaked: " + text);
        StringBuilder hex = new StringBuilder();
        for (byte b : secret) hex.append(String.format("%02x", b));
        assertFalse(text.contains(hex), "the secret leaked: " + text);
    }

    private static Path ownerOnly(Path f, byte[] content) throws Exception {
        Files.write(f, content);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
        return f;
    }

    private HttpResponse<String> call(int port, String method, String path, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30));
        b = method.equals("POST") ? b.POST(HttpRequest.BodyPublishers.noBody()) : b.GET();
        if (authorization != null) b.header("Authorization", authorization);
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String error(HttpResponse<String> r) {
        return AdminJson.tree(r.body()).get("error").asText();
    }

    private static CliRun cli(String... args) {
        return CliRun.of(args);
    }

    /** bin/estuary as an operator runs it, with {@code env} added to this JVM's environment. */
    private CliRun script(Map<String, String> env, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(
                Arrays.asList("bash", repo().resolve("bin/estuary").toString(), "--master", master));
        cmd.addAll(Arrays.asList(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().remove("ESTUARY_ADMIN_TOKEN_FILE");
        pb.environment().putAll(env);
        pb.environment()
                .put(
                        "ESTUARY_CLASSPATH",
                        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
        Process p = pb.start();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread drain = new Thread(() -> {
            try {
                p.getErrorStream().transferTo(err);
            } catch (java.io.IOException ignored) {
                // the process ended
            }
        });
        drain.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        drain.join();
        return new CliRun(p.exitValue(), out, err.toString(StandardCharsets.UTF_8));
    }

    private static Path repo() {
        Path p = Paths.get("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("bin/estuary"))) p = p.getParent();
        if (p == null) throw new IllegalStateException("repository root not found");
        return p;
    }
}
