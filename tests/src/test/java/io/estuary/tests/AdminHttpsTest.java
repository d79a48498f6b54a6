package io.estuary.tests;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import io.estuary.network.tls.ClientTls;
import io.estuary.server.admin.AdminHttpServer;
import io.estuary.server.admin.AdminToken;
import io.estuary.testing.TestCertificates;
import io.estuary.worker.MiniCluster;
import io.netty.handler.ssl.JdkSslContext;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The admin ports of a real master and worker on loopback with {@code estuary.tls.admin.enabled=true} and
 * authentication on: HTTPS calls trusting the CA work (and still need the admin token), {@code /metrics} and
 * {@code /health} answer over HTTPS, an untrusted certificate is refused, a plain client gets no answer, renewed
 * certificate files are served to new connections without a restart, and {@code bin/estuary} talks HTTPS (from its
 * options, and from the configuration through the launcher) and names a plain/HTTPS mismatch either way.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdminHttpsTest {
    private static final TlsConfig.Group G = TlsConfig.Group.ADMIN;
    private Path dir;
    private TestCertificates ca;
    private TestCertificates otherCa;
    private TestCertificates.Issued live;
    private TestCertificates.Issued renewed;
    private Path secretFile;
    private Path tokenFile;
    private String token;
    private MiniCluster cluster;
    private String master;
    private HttpClient trusting;

    @BeforeAll
    void start() throws Exception {
        dir = Files.createTempDirectory("estuary-admin-https");
        ca = TestCertificates.authority(dir, "estuary");
        otherCa = TestCertificates.authority(dir, "other");
        TestCertificates.Issued first = ca.issue("first");
        renewed = ca.issue("renewed");
        live = new TestCertificates.Issued(dir.resolve("tls.crt"), dir.resolve("tls.key"));
        first.copyOver(live);
        String encoded = io.estuary.server.auth.ClusterSecret.generate();
        secretFile = ownerOnly(dir.resolve("cluster.secret"), encoded.getBytes(StandardCharsets.US_ASCII));
        token = AdminToken.derivedFrom(secretFile, "test").value();
        tokenFile = ownerOnly(dir.resolve("admin.token"), token.getBytes(StandardCharsets.UTF_8));
        EstuaryConf conf = ca.configure(new EstuaryConf(), live, false, G)
                .set(TlsConfig.RELOAD_INTERVAL, "1s")
                .set(AuthConfig.ENABLED, "true")
                .set(AuthConfig.CLUSTER_SECRET_FILE, secretFile.toString());
        cluster = new MiniCluster(1, 1, conf);
        master = "127.0.0.1:" + cluster.master().httpPort();
        trusting = client(ca);
    }

    @AfterAll
    void stop() throws Exception {
        if (cluster != null) cluster.close();
    }

    @Test
    void httpsCallsWorkWithTheTrustBundleAndStillNeedTheToken() throws Exception {
        int mp = cluster.master().httpPort();
        int wp = cluster.workers().get(0).httpPort();
        assertEquals(401, call(trusting, mp, "/api/status", null).statusCode());
        HttpResponse<String> status = call(trusting, mp, "/api/status", "Bearer " + token);
        assertEquals(200, status.statusCode(), status.body());
        assertEquals(401, call(trusting, wp, "/api/status", null).statusCode());
        assertEquals(200, call(trusting, wp, "/api/status", "Bearer " + token).statusCode());
        // Scrapers and probes use https.
        assertEquals(200, call(trusting, mp, "/metrics", null).statusCode());
        assertEquals(200, call(trusting, wp, "/metrics", null).statusCode());
        assertEquals(200, call(trusting, wp, "/health", null).statusCode());
    }

    @Test
    void anUntrustedCertificateIsRefusedAndAPlainClientGetsNoAnswer() throws Exception {
        int mp = cluster.master().httpPort();
        HttpClient strange = client(otherCa);
        IOException e = assertThrows(IOException.class, () -> call(strange, mp, "/metrics", null));
        assertInstanceOf(SSLHandshakeException.class, e, String.valueOf(e));
        HttpClient plain =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpRequest r = HttpRequest.newBuilder(URI.create("http://" + master + "/metrics"))
                .timeout(Duration.ofSeconds(30))
                .build();
        assertThrows(IOException.class, () -> plain.send(r, HttpResponse.BodyHandlers.ofString()));
        assertEquals(200, call(trusting, mp, "/metrics", null).statusCode(), "the server keeps serving");
    }

    @Test
    void renewedCertificateFilesServeNewConnectionsWithoutRestart() throws Exception {
        int mp = cluster.master().httpPort();
        int wp = cluster.workers().get(0).httpPort();
        assertEquals("CN=first", presented(mp));
        assertEquals("CN=first", presented(wp));
        renewed.copyOver(live);
        waitFor(() -> presentedOrNone(mp).equals("CN=renewed"), "the master presents the renewed certificate");
        waitFor(() -> presentedOrNone(wp).equals("CN=renewed"), "the worker presents the renewed certificate");
        assertEquals(200, call(client(ca), mp, "/metrics", null).statusCode());
    }

    @Test
    void theCliTalksHttpsAndNamesAMismatch() throws Exception {
        String trust = ca.trustFile().toString();
        CliRun ok = cli("--master", master, "--token-file", tokenFile.toString(), "--trust-file", trust, "workers");
        assertEquals(0, ok.code, ok.err);
        assertTrue(ok.out.contains("127.0.0.1"), ok.out);
        CliRun ex =
                cli("--master", master, "--token-file", tokenFile.toString(), "--trust-file", trust, "exclude", id());
        assertEquals(0, ex.code, ex.err);
        CliRun act =
                cli("--master", master, "--token-file", tokenFile.toString(), "--trust-file", trust, "activate", id());
        assertEquals(0, act.code, act.err);

        // The token is still required over HTTPS.
        CliRun noToken = cli("--master", master, "--trust-file", trust, "workers");
        assertEquals(1, noToken.code, noToken.err);
        assertTrue(noToken.err.contains("requires an admin token"), noToken.err);

        // Plain CLI, HTTPS master.
        CliRun plain = cli("--master", master, "--token-file", tokenFile.toString(), "workers");
        assertEquals(3, plain.code, plain.err);
        assertTrue(plain.err.contains("speaks HTTPS") && plain.err.contains("--tls"), plain.err);

        // HTTPS CLI, a CA that did not sign the master's certificate (--tls alone: the JVM's trust store).
        CliRun untrusted = cli("--master", master, "--token-file", tokenFile.toString(), "--tls", "workers");
        assertEquals(3, untrusted.code, untrusted.err);
        assertTrue(untrusted.err.contains("signed by no CA in the JVM's default trust store"), untrusted.err);

        // HTTPS CLI, plain port.
        try (AdminHttpServer plainServer = AdminHttpServer.builder("plain").start("127.0.0.1", 0)) {
            CliRun reverse = cli("--master", "127.0.0.1:" + plainServer.port(), "--trust-file", trust, "workers");
            assertEquals(3, reverse.code, reverse.err);
            assertTrue(reverse.err.contains("speaks plain HTTP"), reverse.err);
        }

        // The launcher, with TLS and the token from $ESTUARY_CONF_DIR's configuration.
        Path conf = Files.createDirectories(dir.resolve("conf"));
        Files.write(
                conf.resolve("estuary-defaults.conf"),
                ("estuary.auth.enabled=true\nestuary.auth.cluster.secretFile=" + secretFile + "\n"
                                + "estuary.tls.admin.enabled=true\nestuary.tls.admin.trustFile=" + trust + "\n")
                        .getBytes(StandardCharsets.UTF_8));
        CliRun script = script(conf, "--json", "masters");
        assertEquals(0, script.code, script.err);
        assertTrue(script.out.contains("\"masters\""), script.out);
    }

    // ---- helpers ----

    private String id() {
        return io.estuary.master.state.WorkerId.of(cluster.workers().get(0).address());
    }

    private static SSLContext context(TestCertificates trusted) {
        EstuaryConf conf = trusted.configure(new EstuaryConf(), null, false, G);
        return ((JdkSslContext) ClientTls.fromConf(conf.set(TlsConfig.PROVIDER, "jdk"), G)
                        .sslContext())
                .context();
    }

    private static HttpClient client(TestCertificates trusted) {
        return HttpClient.newBuilder()
                .sslContext(context(trusted))
                .connectTimeout(Duration.ofSeconds(5))
                .build();
    }

    private static HttpResponse<String> call(HttpClient c, int port, String path, String authorization)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30));
        if (authorization != null) b.header("Authorization", authorization);
        return c.send(b.GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The subject of the certificate a new connection to {@code port} is shown. */
    private String presented(int port) throws IOException {
        try (SSLSocket s = (SSLSocket) context(ca).getSocketFactory().createSocket("127.0.0.1", port)) {
            s.setSoTimeout(20_000);
            s.startHandshake();
            return ((X509Certificate) s.getSession().getPeerCertificates()[0])
                    .getSubjectX500Principal()
                    .getName();
        }
    }

    private String presentedOrNone(int port) {
        try {
            return presented(port);
        } catch (IOException e) {
            return "none: " + e;
        }
    }

    private static Path ownerOnly(Path f, byte[] content) throws Exception {
        Files.write(f, content);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
        return f;
    }

    private static CliRun cli(String... args) {
        return CliRun.of(args);
    }

    /** bin/estuary as an operator runs it, its configuration in {@code confDir}. */
    private CliRun script(Path confDir, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(
                Arrays.asList("bash", repo().resolve("bin/estuary").toString(), "--master", master));
        cmd.addAll(Arrays.asList(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().remove("ESTUARY_ADMIN_TOKEN_FILE");
        pb.environment().put("ESTUARY_CONF_DIR", confDir.toString());
        pb.environment()
                .put(
                        "ESTUARY_CLASSPATH",
                        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
        pb.redirectError(dir.resolve("script.err").toFile());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return new CliRun(p.exitValue(), out, Files.readString(dir.resolve("script.err")));
    }

    private static Path repo() {
        Path p = Paths.get("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("bin/estuary"))) p = p.getParent();
        if (p == null) throw new IllegalStateException("repository root not found");
        return p;
    }
}
