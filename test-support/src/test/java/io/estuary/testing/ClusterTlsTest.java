package io.estuary.testing;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClusterTlsTest {
    @TempDir
    static Path dir;

    static ClusterTls tls;

    @BeforeAll
    static void make() throws IOException {
        tls = ClusterTls.create(dir);
    }

    @Test
    void serverSettingsTurnOnTheInternalAndDataGroupsWithFilesThatExist() {
        EstuaryConf conf = new EstuaryConf();
        for (String s : tls.serverSettings()) {
            int eq = s.indexOf('=');
            conf.set(s.substring(0, eq), s.substring(eq + 1));
        }
        for (TlsConfig.Group g : new TlsConfig.Group[] {TlsConfig.Group.INTERNAL, TlsConfig.Group.DATA}) {
            assertTrue(conf.get(g.enabled), g.name);
            assertTrue(Files.isReadable(java.nio.file.Paths.get(conf.get(g.certFile))), g.name);
            assertTrue(Files.isReadable(java.nio.file.Paths.get(conf.get(g.keyFile))), g.name);
            assertEquals(tls.trustFile().toString(), conf.get(g.trustFile), g.name);
        }
        // Admin HTTP stays plain: the harness polls it.
        assertFalse(conf.get(TlsConfig.Group.ADMIN.enabled));
        assertFalse(conf.get(TlsConfig.Group.APPLICATION.enabled));
        EstuaryConf inJvm = tls.enableOnServers(new EstuaryConf());
        assertTrue(inJvm.get(TlsConfig.Group.DATA.enabled));
        assertFalse(inJvm.get(TlsConfig.Group.ADMIN.enabled));
    }

    @Test
    void jobSettingsCoverTheApplicationGroupUnderThePrefix() {
        Map<String, String> spark = tls.jobSettings("spark.");
        for (TlsConfig.Group g :
                new TlsConfig.Group[] {TlsConfig.Group.INTERNAL, TlsConfig.Group.DATA, TlsConfig.Group.APPLICATION}) {
            assertEquals("true", spark.get("spark." + g.enabled.key()), g.name);
            assertEquals(tls.trustFile().toString(), spark.get("spark." + g.trustFile.key()), g.name);
        }
        assertFalse(spark.containsKey("spark." + TlsConfig.Group.ADMIN.enabled.key()));
        assertEquals(spark.size(), tls.jobSettings("").size());
        for (String key : tls.jobSettings("").keySet()) assertTrue(key.startsWith("estuary.tls."), key);
    }

    @Test
    void peerCertificateIsTheClustersOverTlsAndFailsOnAPlainPort() throws Exception {
        try (SSLServerSocket server = (SSLServerSocket)
                serverContext().getServerSocketFactory().createServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Thread accept = new Thread(() -> {
                try (SSLSocket s = (SSLSocket) server.accept()) {
                    s.startHandshake();
                    s.getInputStream().read(); // until the client closes
                } catch (IOException ignored) {
                    // the client closes right after its handshake
                }
            });
            accept.start();
            assertEquals(
                    ClusterTls.SUBJECT,
                    tls.peerCertificate(server.getLocalPort())
                            .getSubjectX500Principal()
                            .getName());
            accept.join(10_000);
        }
        try (ServerSocket plain = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Thread accept = new Thread(() -> {
                try (Socket s = plain.accept()) {
                    s.getOutputStream().write("not TLS at all\n".getBytes(StandardCharsets.US_ASCII));
                } catch (IOException ignored) {
                    // the client gives up
                }
            });
            accept.start();
            assertThrows(IOException.class, () -> tls.peerCertificate(plain.getLocalPort()));
            accept.join(10_000);
        }
    }

    /** A JDK TLS server presenting the cluster's certificate, from its PEM files. */
    private static SSLContext serverContext() throws Exception {
        Map<String, String> files = tls.jobSettings("");
        Path certFile = java.nio.file.Paths.get(files.get(TlsConfig.Group.DATA.certFile.key()));
        Path keyFile = java.nio.file.Paths.get(files.get(TlsConfig.Group.DATA.keyFile.key()));
        String pem = new String(Files.readAllBytes(keyFile), StandardCharsets.US_ASCII)
                .replaceAll("-----[A-Z ]+-----", "")
                .replaceAll("\\s", "");
        PrivateKey key = KeyFactory.getInstance("EC")
                .generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem)));
        List<? extends Certificate> chain;
        try (InputStream in = Files.newInputStream(certFile)) {
            chain = new java.util.ArrayList<>(
                    CertificateFactory.getInstance("X.509").generateCertificates(in));
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("node", key, "p".toCharArray(), chain.toArray(new Certificate[0]));
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, "p".toCharArray());
        SSLContext c = SSLContext.getInstance("TLS");
        c.init(kmf.getKeyManagers(), null, null);
        return c;
    }
}
