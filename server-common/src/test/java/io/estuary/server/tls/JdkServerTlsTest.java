package io.estuary.server.tls;

import static org.junit.jupiter.api.Assertions.*;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import io.estuary.network.tls.ClientTls;
import io.estuary.testing.ManualClock;
import io.estuary.testing.TestCertificates;
import io.netty.handler.ssl.JdkSslContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link JdkServerTls} behind the JDK's own HTTPS server on loopback, configured as the admin endpoint configures it:
 * the group's certificate served with TLS 1.3/1.2 only, a renewed certificate served to new connections without a
 * restart (the server was given the context once), mutual TLS, an untrusted server refused by the client, and what
 * a plain HTTP client gets from the HTTPS port.
 */
class JdkServerTlsTest {
    static final TlsConfig.Group G = TlsConfig.Group.ADMIN;

    @TempDir
    static Path dir;

    static TestCertificates ca;
    static TestCertificates otherCa;
    static TestCertificates.Issued server;
    static TestCertificates.Issued renewed;
    static TestCertificates.Issued client;
    static TestCertificates.Issued stranger;

    private HttpsServer http;

    @BeforeAll
    static void certificates() throws Exception {
        ca = TestCertificates.authority(dir, "estuary");
        otherCa = TestCertificates.authority(dir, "other");
        server = ca.issue("server");
        renewed = ca.issue("renewed");
        client = ca.issue("client");
        stranger = otherCa.issue("stranger");
    }

    @AfterEach
    void stop() {
        if (http != null) http.stop(0);
    }

    /** An HTTPS server answering "ok" at every path, with TLS set up as AdminHttpServer sets it up. */
    private int serve(JdkServerTls tls) throws IOException {
        http = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 8);
        http.setHttpsConfigurator(new HttpsConfigurator(tls.sslContext()) {
            @Override
            public void configure(HttpsParameters params) {
                params.setSSLParameters(tls.sslParameters());
            }
        });
        http.createContext("/", ex -> {
            byte[] b = "ok".getBytes(StandardCharsets.US_ASCII);
            ex.sendResponseHeaders(200, b.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(b);
            }
        });
        http.start();
        return http.getAddress().getPort();
    }

    private static SSLContext clientContext(TestCertificates trusted, TestCertificates.Issued identity) {
        EstuaryConf conf = trusted.configure(new EstuaryConf(), identity, identity != null, G);
        return ((JdkSslContext) ClientTls.fromConf(conf.set(TlsConfig.PROVIDER, "jdk"), G)
                        .sslContext())
                .context();
    }

    /** One request on a new connection: the status line, and the server's certificate in {@code peer[0]}. */
    private static String get(SSLContext ctx, int port, String[] protocols, X509Certificate[] peer) throws IOException {
        try (SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", port)) {
            s.setSoTimeout(20_000);
            if (protocols != null) s.setEnabledProtocols(protocols);
            s.startHandshake();
            if (peer != null) peer[0] = (X509Certificate) s.getSession().getPeerCertificates()[0];
            s.getOutputStream()
                    .write("GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                            .getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            String answer = new String(readAll(s.getInputStream()), StandardCharsets.US_ASCII);
            return answer.isEmpty() ? "" : answer.substring(0, answer.indexOf('\r'));
        }
    }

    /**
     * The server refuses the client's certificate: with TLS 1.3 the client's handshake completes before the server
     * checks it, and the JDK's HTTPS server then closes the connection without an alert, so the client sees either
     * a TLS error or the connection closed with no answer; never an HTTP answer.
     */
    private static void assertRefused(SSLContext ctx, int port, String what) {
        try {
            assertEquals("", get(ctx, port, null, null), what + ": no HTTP answer");
        } catch (IOException expected) {
            // refused during the handshake
        }
    }

    private static byte[] readAll(InputStream in) throws IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        byte[] buf = new byte[4096];
        for (int n; (n = in.read(buf)) > 0; ) out.write(buf, 0, n);
        return out.toByteArray();
    }

    private static String subject(X509Certificate c) {
        return c.getSubjectX500Principal().getName();
    }

    @Test
    void servesTheGroupsCertificateOverTls13And12Only() throws Exception {
        JdkServerTls tls =
                JdkServerTls.fromConf(ca.configure(new EstuaryConf(), server, false, G), G, new ManualClock());
        assertArrayEquals(
                new String[] {"TLSv1.3", "TLSv1.2"}, tls.sslParameters().getProtocols());
        assertFalse(tls.sslParameters().getNeedClientAuth());
        int port = serve(tls);
        X509Certificate[] peer = new X509Certificate[1];
        assertEquals("HTTP/1.1 200 OK", get(clientContext(ca, null), port, null, peer));
        assertEquals("CN=server", subject(peer[0]));
        assertEquals("HTTP/1.1 200 OK", get(clientContext(ca, null), port, new String[] {"TLSv1.2"}, null));
    }

    @Test
    void disabledGroupGivesNoTls() throws Exception {
        assertNull(JdkServerTls.fromConf(new EstuaryConf(), G, new ManualClock()));
    }

    @Test
    void aClientTrustingAnotherCaRefusesTheServer() throws Exception {
        int port =
                serve(JdkServerTls.fromConf(ca.configure(new EstuaryConf(), server, false, G), G, new ManualClock()));
        javax.net.ssl.SSLHandshakeException e = assertThrows(
                javax.net.ssl.SSLHandshakeException.class, () -> get(clientContext(otherCa, null), port, null, null));
        assertTrue(String.valueOf(e.getMessage()).contains("PKIX"), e.getMessage());
    }

    @Test
    void renewedFilesServeNewConnectionsWithoutRestart() throws Exception {
        TestCertificates.Issued live = new TestCertificates.Issued(dir.resolve("live.crt"), dir.resolve("live.key"));
        server.copyOver(live);
        ManualClock clock = new ManualClock();
        EstuaryConf conf = ca.configure(new EstuaryConf(), live, false, G).set(TlsConfig.RELOAD_INTERVAL, "10s");
        int port = serve(JdkServerTls.fromConf(conf, G, clock));
        X509Certificate[] peer = new X509Certificate[1];
        get(clientContext(ca, null), port, null, peer);
        assertEquals("CN=server", subject(peer[0]));

        renewed.copyOver(live);
        get(clientContext(ca, null), port, null, peer);
        assertEquals("CN=server", subject(peer[0]), "files are checked at most once per reload interval");
        clock.advance(java.time.Duration.ofSeconds(10));
        get(clientContext(ca, null), port, null, peer);
        assertEquals("CN=renewed", subject(peer[0]), "a new connection after the interval gets the renewed files");
    }

    @Test
    void mutualTlsRequiresATrustedClientCertificate() throws Exception {
        JdkServerTls tls =
                JdkServerTls.fromConf(ca.configure(new EstuaryConf(), server, true, G), G, new ManualClock());
        assertTrue(tls.sslParameters().getNeedClientAuth());
        int port = serve(tls);
        assertEquals("HTTP/1.1 200 OK", get(clientContext(ca, client), port, null, null));
        assertRefused(clientContext(ca, null), port, "no client certificate");
        // Trusts our CA for the server, but presents a certificate from another CA.
        EstuaryConf strange = ca.configure(new EstuaryConf(), stranger, true, G);
        SSLContext strangeCtx = ((JdkSslContext) ClientTls.fromConf(strange.set(TlsConfig.PROVIDER, "jdk"), G)
                        .sslContext())
                .context();
        assertRefused(strangeCtx, port, "a client certificate from another CA");
        assertEquals("HTTP/1.1 200 OK", get(clientContext(ca, client), port, null, null), "still serving");
    }

    @Test
    void aPlainHttpRequestIsClosedUnanswered() throws Exception {
        int port =
                serve(JdkServerTls.fromConf(ca.configure(new EstuaryConf(), server, false, G), G, new ManualClock()));
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(20_000);
            s.getOutputStream()
                    .write("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            InputStream in = s.getInputStream();
            byte[] answer = readAll(in);
            // The JDK's server closes the connection without a byte (not even a TLS alert): documented in tls.md.
            assertEquals(
                    "",
                    new String(answer, StandardCharsets.US_ASCII),
                    "no HTTP answer on the HTTPS port: " + Arrays.toString(answer));
        }
        // The server keeps serving TLS clients.
        assertEquals("HTTP/1.1 200 OK", get(clientContext(ca, null), port, null, null));
    }
}
