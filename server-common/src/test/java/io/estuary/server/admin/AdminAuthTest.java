package io.estuary.server.admin;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.ConfigException;
import io.estuary.common.config.EstuaryConf;
import io.estuary.testing.ManualClock;
import io.prometheus.client.CollectorRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A real {@link AdminHttpServer} on loopback with each {@link AdminAuth} policy, called over HTTP. */
class AdminAuthTest {
    private static final String TOKEN = "the-admin-token-for-this-test-42";

    @TempDir
    Path dir;

    private final HttpClient client =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final AtomicInteger changes = new AtomicInteger();
    private CollectorRegistry registry;
    private final ManualClock clock = new ManualClock();
    private AdminHttpServer server;

    @AfterEach
    void stop() {
        if (server != null) server.close();
    }

    private AdminAuth start(EstuaryConf conf) throws Exception {
        AdminAuth auth = AdminAuth.fromConf(conf, clock);
        registry = new CollectorRegistry(); // one per server, as each master and worker has its own
        server = AdminHttpServer.builder("auth-test")
                .auth(auth)
                .get("/api/status", r -> AdminHttpServer.Response.text(200, "status"))
                .get("/health", r -> AdminHttpServer.Response.text(200, "ok\n"))
                .post("/api/change", r -> {
                    changes.incrementAndGet();
                    return AdminHttpServer.Response.text(200, "changed");
                })
                .metrics(registry)
                .start("127.0.0.1", 0);
        return auth;
    }

    private EstuaryConf authOn() throws Exception {
        Path f = dir.resolve("admin.token");
        Files.write(f, (TOKEN + "\n").getBytes(StandardCharsets.UTF_8));
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
        return new EstuaryConf().set(AuthConfig.ENABLED, "true").set(AuthConfig.ADMIN_TOKEN_FILE, f.toString());
    }

    private HttpResponse<String> call(String method, String path, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path));
        b = method.equals("POST") ? b.POST(HttpRequest.BodyPublishers.noBody()) : b.GET();
        if (authorization != null) b.header("Authorization", authorization);
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void withAuthenticationOffEveryCallGoesThrough() throws Exception {
        AdminAuth auth = start(new EstuaryConf().set(AuthConfig.ENABLED, "false"));
        assertFalse(auth.enabled());
        assertEquals(200, call("POST", "/api/change", null).statusCode());
        assertEquals(1, changes.get());
        assertEquals(200, call("GET", "/api/status", null).statusCode());
        assertEquals(200, call("GET", "/metrics", null).statusCode());
        assertEquals(200, call("POST", "/api/change", "Bearer whatever").statusCode());
        assertEquals(2, changes.get());
        assertTrue(PrometheusText.scrape(registry).contains(AdminAuth.REFUSALS), "the counter exists with auth off");
    }

    @Test
    void changesNeedTheTokenAndA401NamesWhatIsMissing() throws Exception {
        AdminAuth auth = start(authOn());
        HttpResponse<String> none = call("POST", "/api/change", null);
        assertEquals(401, none.statusCode());
        assertEquals(0, changes.get(), "a refused change changes nothing");
        String error = AdminJson.tree(none.body()).get("error").asText();
        assertTrue(error.contains("POST /api/change needs an admin token"), error);
        assertTrue(error.contains(AuthConfig.ADMIN_TOKEN_FILE.key()), error);
        assertFalse(none.body().contains(TOKEN), none.body());
        assertEquals(
                "Bearer realm=\"estuary-admin\"",
                none.headers().firstValue("WWW-Authenticate").orElse(null));

        HttpResponse<String> wrong = call("POST", "/api/change", "Bearer " + TOKEN + "-not");
        assertEquals(401, wrong.statusCode());
        assertTrue(AdminJson.tree(wrong.body()).get("error").asText().contains("not this server's"), wrong.body());
        assertFalse(wrong.body().contains(TOKEN), wrong.body());
        assertEquals(401, call("POST", "/api/change", "Basic " + TOKEN).statusCode());
        assertEquals(401, call("POST", "/api/nowhere", null).statusCode(), "unknown changes are refused first");
        assertEquals(0, changes.get());

        assertEquals(200, call("POST", "/api/change", "Bearer " + TOKEN).statusCode());
        assertEquals(200, call("POST", "/api/change", "bearer  " + TOKEN + " ").statusCode());
        assertEquals(2, changes.get());

        assertEquals(3, auth.refused(AdminAuth.Refusal.MISSING));
        assertEquals(1, auth.refused(AdminAuth.Refusal.WRONG));
        String scrape = call("GET", "/metrics", null).body();
        assertTrue(scrape.contains(AdminAuth.REFUSALS + "{reason=\"missing\",} 3.0"), scrape);
        assertTrue(scrape.contains(AdminAuth.REFUSALS + "{reason=\"wrong\",} 1.0"), scrape);
    }

    @Test
    void readsFollowProtectReadsAndMetricsAndHealthOpenMetrics() throws Exception {
        start(authOn());
        assertEquals(401, call("GET", "/api/status", null).statusCode());
        assertEquals(200, call("GET", "/api/status", "Bearer " + TOKEN).statusCode());
        assertEquals(200, call("GET", "/metrics", null).statusCode());
        assertEquals(200, call("GET", "/health", null).statusCode());
        server.close();

        start(authOn().set(AuthConfig.ADMIN_PROTECT_READS, "false").set(AuthConfig.ADMIN_OPEN_METRICS, "false"));
        assertEquals(200, call("GET", "/api/status", null).statusCode());
        assertEquals(401, call("POST", "/api/change", null).statusCode(), "changes always need the token");
        assertEquals(401, call("GET", "/metrics", null).statusCode());
        assertEquals(401, call("GET", "/health", null).statusCode());
        assertEquals(200, call("GET", "/metrics", "Bearer " + TOKEN).statusCode());
        assertEquals(200, call("GET", "/health", "Bearer " + TOKEN).statusCode());
    }

    @Test
    void refusalsAreLoggedAtMostOncePerIntervalAndAllCounted() throws Exception {
        AdminAuth auth = start(authOn());
        for (int i = 0; i < 5; i++)
            assertEquals(401, call("POST", "/api/change", null).statusCode());
        assertEquals(1, auth.warningsLogged());
        clock.advance(Duration.ofMillis(AdminAuth.WARN_INTERVAL_MS));
        assertEquals(401, call("POST", "/api/change", null).statusCode());
        assertEquals(2, auth.warningsLogged());
        assertEquals(6, auth.refused(AdminAuth.Refusal.MISSING));
    }

    @Test
    void authenticationOnWithoutAnyTokenSourceRefusesToStart() {
        ConfigException e = assertThrows(
                ConfigException.class,
                () -> AdminAuth.fromConf(new EstuaryConf().set(AuthConfig.ENABLED, "true"), clock));
        assertTrue(e.getMessage().contains(AuthConfig.ADMIN_TOKEN_FILE.key()), e.getMessage());
        assertTrue(e.getMessage().contains(AuthConfig.CLUSTER_SECRET_FILE.key()), e.getMessage());
    }
}
