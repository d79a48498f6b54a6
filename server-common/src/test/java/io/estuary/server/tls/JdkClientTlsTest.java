package io.estuary.server.tls;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import io.estuary.network.tls.JdkClientTls;
import io.estuary.testing.ManualClock;
import io.estuary.testing.TestCertificates;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link JdkClientTls}'s engines in a full TLS handshake, in memory, against engines of {@link JdkServerTls} set up
 * as the masters' Raft port sets them up: the server's certificate trusted and its host checked, an untrusted server
 * or one for another host refused, mutual TLS.
 */
class JdkClientTlsTest {
    static final TlsConfig.Group G = TlsConfig.Group.INTERNAL;

    @TempDir
    static Path dir;

    static TestCertificates ca;
    static TestCertificates otherCa;
    static TestCertificates.Issued server;
    static TestCertificates.Issued client;

    @BeforeAll
    static void certificates() throws Exception {
        ca = TestCertificates.authority(dir, "estuary");
        otherCa = TestCertificates.authority(dir, "other");
        server = ca.issue("server");
        client = ca.issue("client");
    }

    private static SSLEngine serverEngine(boolean clientAuth) {
        JdkServerTls tls =
                JdkServerTls.fromConf(ca.configure(new EstuaryConf(), server, clientAuth, G), G, new ManualClock());
        SSLEngine e = tls.sslContext().createSSLEngine();
        e.setUseClientMode(false);
        e.setSSLParameters(tls.sslParameters());
        return e;
    }

    private static JdkClientTls clientTls(TestCertificates trusted, TestCertificates.Issued identity, boolean verify) {
        EstuaryConf conf = trusted.configure(new EstuaryConf(), identity, identity != null, G)
                .set(TlsConfig.VERIFY_HOSTNAME, String.valueOf(verify));
        return JdkClientTls.fromConf(conf, G, new ManualClock());
    }

    /** Runs both engines' handshake to the end, or throws the first side's failure. */
    private static void handshake(SSLEngine c, SSLEngine s) throws SSLException {
        int size = Math.max(c.getSession().getPacketBufferSize(), s.getSession().getPacketBufferSize()) * 4;
        ByteBuffer toServer = ByteBuffer.allocate(size);
        ByteBuffer toClient = ByteBuffer.allocate(size);
        ByteBuffer app = ByteBuffer.allocate(size);
        ByteBuffer empty = ByteBuffer.allocate(0);
        c.beginHandshake();
        s.beginHandshake();
        for (int round = 0; round < 1000; round++) {
            boolean cDone = done(c.getHandshakeStatus());
            boolean sDone = done(s.getHandshakeStatus());
            if (cDone && sDone) return;
            step(c, empty, toServer, toClient, app);
            step(s, empty, toClient, toServer, app);
        }
        fail("the handshake did not finish");
    }

    private static boolean done(HandshakeStatus h) {
        return h == HandshakeStatus.FINISHED || h == HandshakeStatus.NOT_HANDSHAKING;
    }

    /** One move of {@code e}: run its tasks, write what it wants to send to {@code out}, read {@code in}. */
    private static void step(SSLEngine e, ByteBuffer empty, ByteBuffer out, ByteBuffer in, ByteBuffer app)
            throws SSLException {
        Runnable task;
        while ((task = e.getDelegatedTask()) != null) task.run();
        if (e.getHandshakeStatus() == HandshakeStatus.NEED_WRAP) e.wrap(empty, out);
        in.flip();
        try {
            while (in.hasRemaining() && e.getHandshakeStatus() == HandshakeStatus.NEED_UNWRAP) {
                app.clear();
                if (e.unwrap(in, app).bytesConsumed() == 0) break;
                while ((task = e.getDelegatedTask()) != null) task.run();
            }
        } finally {
            in.compact();
        }
    }

    @Test
    void aClientEngineTrustsTheGroupsCaAndChecksTheHost() throws Exception {
        SSLEngine c = clientTls(ca, null, true).newEngine("127.0.0.1", 9872);
        assertTrue(c.getUseClientMode());
        assertArrayEquals(
                new String[] {"TLSv1.3", "TLSv1.2"}, c.getSSLParameters().getProtocols());
        assertEquals("HTTPS", c.getSSLParameters().getEndpointIdentificationAlgorithm());
        assertEquals("127.0.0.1", c.getPeerHost());
        handshake(c, serverEngine(false));
        X509Certificate peer = (X509Certificate) c.getSession().getPeerCertificates()[0];
        assertEquals("CN=server", peer.getSubjectX500Principal().getName());
    }

    @Test
    void aServerOfAnotherCaOrForAnotherHostIsRefused() throws Exception {
        SSLException untrusted = assertThrows(
                SSLException.class,
                () -> handshake(clientTls(otherCa, null, true).newEngine("127.0.0.1", 1), serverEngine(false)));
        assertTrue(String.valueOf(untrusted.getMessage()).contains("PKIX"), untrusted.getMessage());
        assertThrows(
                SSLException.class,
                () -> handshake(clientTls(ca, null, true).newEngine("other.example", 1), serverEngine(false)),
                "the certificate does not name other.example");
        SSLEngine unchecked = clientTls(ca, null, false).newEngine("other.example", 1);
        assertNull(unchecked.getSSLParameters().getEndpointIdentificationAlgorithm());
        handshake(unchecked, serverEngine(false)); // verifyHostname=false: any host the CA signed for
    }

    @Test
    void mutualTlsPresentsTheGroupsCertificate() throws Exception {
        SSLEngine s = serverEngine(true);
        handshake(clientTls(ca, client, true).newEngine("127.0.0.1", 1), s);
        X509Certificate peer = (X509Certificate) s.getSession().getPeerCertificates()[0];
        assertEquals("CN=client", peer.getSubjectX500Principal().getName());
        assertThrows(
                SSLException.class,
                () -> handshake(clientTls(ca, null, true).newEngine("127.0.0.1", 1), serverEngine(true)),
                "no client certificate");
    }

    @Test
    void disabledGroupGivesNoTls() {
        assertNull(JdkClientTls.fromConf(new EstuaryConf(), G, new ManualClock()));
    }
}
