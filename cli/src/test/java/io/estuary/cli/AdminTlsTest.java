package io.estuary.cli;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import io.estuary.testing.TestCertificates;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link AdminTls} reads the admin group's PEM files with the JDK alone: on only when asked, a trust bundle that
 * verifies the server, a PKCS#8 key and chain it presents for mutual TLS (checked by a loopback TLS server that
 * requires client certificates), and files it cannot use refused with a usage error naming the file and key.
 */
class AdminTlsTest {
    static final TlsConfig.Group G = TlsConfig.Group.ADMIN;

    @TempDir
    static Path dir;

    static TestCertificates ca;
    static TestCertificates.Issued server;
    static TestCertificates.Issued client;

    @BeforeAll
    static void certificates() throws Exception {
        ca = TestCertificates.authority(dir, "estuary");
        server = ca.issue("server");
        client = ca.issue("client");
    }

    @Test
    void offUnlessAskedFor() throws Exception {
        assertNull(AdminTls.fromConf(new EstuaryConf(), false, null));
        assertNotNull(AdminTls.fromConf(new EstuaryConf(), true, null), "--tls: the JVM's trust store");
        AdminTls byOption =
                AdminTls.fromConf(new EstuaryConf(), false, ca.trustFile().toString());
        assertTrue(byOption.trustSource().contains(ca.trustFile().toString()));
        assertArrayEquals(
                new String[] {"TLSv1.3", "TLSv1.2"}, byOption.parameters().getProtocols());
    }

    @Test
    void presentsItsCertificateToAServerThatRequiresOne() throws Exception {
        // The server side: the same class with the server's certificate (an SSLContext with keys serves as well).
        AdminTls serverTls = AdminTls.fromConf(ca.configure(new EstuaryConf(), server, true, G), false, null);
        AdminTls clientTls = AdminTls.fromConf(ca.configure(new EstuaryConf(), client, true, G), false, null);
        AdminTls anonymous = AdminTls.fromConf(ca.configure(new EstuaryConf(), null, false, G), false, null);
        try (SSLServerSocket ss = (SSLServerSocket) serverTls
                .context()
                .getServerSocketFactory()
                .createServerSocket(0, 4, InetAddress.getLoopbackAddress())) {
            ss.setNeedClientAuth(true);
            assertEquals("CN=client", handshake(ss, clientTls).join());
            CompletableFuture<String> refused = handshake(ss, anonymous);
            assertThrows(Exception.class, refused::join, "no client certificate");
        }
    }

    /** The server accepts one connection and returns its client's certificate subject; the client connects. */
    private static CompletableFuture<String> handshake(SSLServerSocket ss, AdminTls clientTls) {
        CompletableFuture<String> seen = CompletableFuture.supplyAsync(() -> {
            try (SSLSocket s = (SSLSocket) ss.accept()) {
                s.setSoTimeout(20_000);
                s.startHandshake();
                return ((X509Certificate) s.getSession().getPeerCertificates()[0])
                        .getSubjectX500Principal()
                        .getName();
            } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        });
        try (SSLSocket c =
                (SSLSocket) clientTls.context().getSocketFactory().createSocket("127.0.0.1", ss.getLocalPort())) {
            c.setSoTimeout(20_000);
            c.startHandshake();
            assertEquals(
                    "CN=server",
                    ((X509Certificate) c.getSession().getPeerCertificates()[0])
                            .getSubjectX500Principal()
                            .getName());
            c.getOutputStream().write(1); // the server's verdict on our certificate reaches us on I/O (TLS 1.3)
            c.getInputStream().read();
        } catch (Exception e) {
            // refused: the server's side says why
        }
        return seen;
    }

    @Test
    void unusableFilesAreUsageErrorsNamingTheFile() throws Exception {
        Path notPem = Files.writeString(dir.resolve("not.pem"), "hello");
        CliException trust =
                assertThrows(CliException.class, () -> AdminTls.fromConf(new EstuaryConf(), false, notPem.toString()));
        assertEquals(CliException.USAGE, trust.exitCode());
        assertTrue(
                trust.getMessage().contains(notPem.toString())
                        && trust.getMessage().contains("--trust-file"),
                trust.getMessage());

        EstuaryConf noKey = ca.configure(new EstuaryConf(), null, true, G);
        CliException missing = assertThrows(CliException.class, () -> AdminTls.fromConf(noKey, false, null));
        assertTrue(missing.getMessage().contains(G.certFile.key()), missing.getMessage());

        EstuaryConf badKey = ca.configure(new EstuaryConf(), client, true, G).set(G.keyFile, notPem.toString());
        CliException key = assertThrows(CliException.class, () -> AdminTls.fromConf(badKey, false, null));
        assertTrue(
                key.getMessage().contains("BEGIN PRIVATE KEY")
                        && key.getMessage().contains(G.keyFile.key()),
                key.getMessage());
    }
}
