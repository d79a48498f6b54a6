package io.estuary.network.tls;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.config.TlsConfig;
import io.estuary.common.status.StatusCode;
import io.estuary.network.buffer.FileSegmentManagedBuffer;
import io.estuary.network.buffer.NettyManagedBuffer;
import io.estuary.network.client.ChunkReceivedCallback;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.protocol.PushData;
import io.estuary.network.server.ResponseCallback;
import io.estuary.network.server.RpcHandler;
import io.estuary.network.server.StreamManager;
import io.estuary.network.server.TransportServer;
import io.estuary.testing.ManualClock;
import io.estuary.testing.TestCertificates;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.handler.ssl.SslHandler;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * TLS on real servers over loopback: RPC, push and chunk fetch (a file segment, which TLS cannot sendfile), mutual
 * TLS, plain and TLS meeting each other, untrusted and expired certificates, reload, unusable files.
 */
class TlsTransportTest {
    static final TlsConfig.Group G = TlsConfig.Group.DATA;

    @TempDir
    static Path dir;

    static TestCertificates ca;
    static TestCertificates otherCa;
    static TestCertificates.Issued server;
    static TestCertificates.Issued renewed;
    static TestCertificates.Issued client;
    static TestCertificates.Issued stranger;
    static TestCertificates.Issued expired;
    static File chunkFile;
    static byte[] chunkBytes;

    @BeforeAll
    static void certificates() throws Exception {
        ca = TestCertificates.authority(dir, "estuary");
        otherCa = TestCertificates.authority(dir, "other");
        server = ca.issue("server");
        renewed = ca.issue("renewed");
        client = ca.issue("client");
        stranger = otherCa.issue("stranger");
        expired = ca.issue("expired", true);
        chunkBytes = new byte[3 << 20];
        new Random(7).nextBytes(chunkBytes);
        chunkFile = dir.resolve("chunk.data").toFile();
        Files.write(chunkFile.toPath(), chunkBytes);
    }

    static EstuaryConf base() {
        return new EstuaryConf().set(NetworkConfig.RPC_TIMEOUT, "20s").set(NetworkConfig.IO_THREADS, "2");
    }

    /** Answers an RPC with the subject of the certificate this connection presents; a push with its CRC. */
    static final class Handler implements RpcHandler {
        @Override
        public void receive(Channel channel, ByteBuf body, ResponseCallback callback) {
            String subject;
            try {
                SslHandler ssl = channel.pipeline().get(SslHandler.class);
                subject = ssl == null
                        ? "plain"
                        : ((X509Certificate) ssl.engine().getSession().getLocalCertificates()[0])
                                .getSubjectX500Principal()
                                .getName();
            } catch (RuntimeException e) {
                subject = e.toString();
            }
            callback.onSuccess(Unpooled.copiedBuffer(subject, StandardCharsets.UTF_8));
        }

        @Override
        public void receivePush(Channel channel, PushData push, ResponseCallback callback) {
            try {
                ByteBuf b = push.body().toByteBuf();
                CRC32 crc = new CRC32();
                crc.update(b.nioBuffer());
                b.release();
                callback.onSuccess(Unpooled.copyLong(crc.getValue()));
            } catch (java.io.IOException e) {
                callback.onFailure(StatusCode.FATAL, e.toString());
            } finally {
                push.body().release();
            }
        }

        @Override
        public StreamManager streamManager() {
            return (streamId, chunkIndex) -> new FileSegmentManagedBuffer(chunkFile, 1, chunkBytes.length - 1);
        }
    }

    static TransportServer tlsServer(EstuaryConf conf, ManualClock clock) {
        TransportServer s = new TransportServer(conf, "tls-server", "127.0.0.1", 0, new Handler());
        return s.withTls(ServerTls.fromConf(conf, G, clock));
    }

    static TransportClientFactory tlsClients(EstuaryConf conf) {
        return new TransportClientFactory(conf, "tls-client").withTls(ClientTls.fromConf(conf, G));
    }

    static String subject(TransportClient c) throws RemoteException {
        ByteBuf r = c.sendRpcSync(Unpooled.copiedBuffer("who", StandardCharsets.UTF_8));
        try {
            return r.toString(StandardCharsets.UTF_8);
        } finally {
            r.release();
        }
    }

    @Test
    void rpcPushAndFetchOverTls() throws Exception {
        EstuaryConf conf = ca.configure(base(), server, false, G);
        try (TransportServer s = tlsServer(conf, new ManualClock());
                TransportClientFactory f = tlsClients(ca.configure(base(), null, false, G))) {
            rpcPushAndFetch(f.client("localhost", s.port()));
        }
    }

    /**
     * Servers encrypt with OpenSSL (their class path carries netty-tcnative), clients in the shaded jars with the
     * JDK's engine: every pairing serves RPC, push and fetch, and each end uses the engine it was told to.
     */
    @ParameterizedTest(name = "server {0}, client {1}")
    @CsvSource({"openssl, jdk", "jdk, openssl", "openssl, openssl", "jdk, jdk"})
    void eitherEngineOnEitherEnd(String serverEngine, String clientEngine) throws Exception {
        assertTrue(io.netty.handler.ssl.OpenSsl.isAvailable(), "netty-tcnative is on the test class path");
        EstuaryConf serverConf = ca.configure(base(), server, false, G).set(TlsConfig.PROVIDER, serverEngine);
        EstuaryConf clientConf = ca.configure(base(), null, false, G).set(TlsConfig.PROVIDER, clientEngine);
        assertEquals(
                serverEngine.equals("jdk"),
                SslContexts.server(TlsFiles.configured(serverConf, G).read())
                        instanceof io.netty.handler.ssl.JdkSslContext);
        assertEquals(
                clientEngine.equals("jdk"),
                SslContexts.client(TlsFiles.configured(clientConf, G).read())
                        instanceof io.netty.handler.ssl.JdkSslContext);
        try (TransportServer s = tlsServer(serverConf, new ManualClock());
                TransportClientFactory f = tlsClients(clientConf)) {
            rpcPushAndFetch(f.client("localhost", s.port()));
        }
    }

    @Test
    void autoIsOpenSslWhereItLoads() throws Exception {
        EstuaryConf conf = ca.configure(base(), server, false, G);
        assertEquals("auto", conf.get(TlsConfig.PROVIDER));
        assertFalse(
                SslContexts.server(TlsFiles.configured(conf, G).read()) instanceof io.netty.handler.ssl.JdkSslContext);
        io.estuary.common.config.ConfigException e = assertThrows(
                io.estuary.common.config.ConfigException.class,
                () -> base().set(TlsConfig.PROVIDER, "boringssl").get(TlsConfig.PROVIDER));
        assertTrue(e.getMessage().contains(TlsConfig.PROVIDER.key()), e.getMessage());
    }

    private static void rpcPushAndFetch(TransportClient c) throws Exception {
        {
            assertEquals("CN=server", subject(c));

            byte[] pushed = new byte[1 << 20];
            new Random(3).nextBytes(pushed);
            CRC32 expected = new CRC32();
            expected.update(pushed);
            ByteBuf ack = TransportClient.await(
                    c.pushData("shuffle", 1, 0, new NettyManagedBuffer(Unpooled.wrappedBuffer(pushed))));
            assertEquals(expected.getValue(), ack.readLong(), "the pushed bytes arrive intact");
            ack.release();

            CompletableFuture<byte[]> chunk = new CompletableFuture<>();
            c.fetchChunk(5, 0, new ChunkReceivedCallback() {
                @Override
                public void onSuccess(int index, ByteBuf body) {
                    byte[] b = new byte[body.readableBytes()];
                    body.readBytes(b);
                    body.release();
                    chunk.complete(b);
                }

                @Override
                public void onFailure(int index, Throwable cause) {
                    chunk.completeExceptionally(cause);
                }
            });
            byte[] got = chunk.get(30, TimeUnit.SECONDS);
            assertArrayEquals(java.util.Arrays.copyOfRange(chunkBytes, 1, chunkBytes.length), got);
        }
    }

    @Test
    void mutualTlsRefusesAClientWithoutACertificate() throws Exception {
        try (TransportServer s = tlsServer(ca.configure(base(), server, true, G), new ManualClock());
                TransportClientFactory anonymous = tlsClients(ca.configure(base(), null, false, G));
                TransportClientFactory known = tlsClients(ca.configure(base(), client, true, G))) {
            RemoteException e =
                    assertThrows(RemoteException.class, () -> subject(anonymous.client("localhost", s.port())));
            assertEquals(StatusCode.UNAUTHENTICATED, e.status(), e.getMessage());
            assertTrue(e.getMessage().contains(G.clientAuth.key()), e.getMessage());
            assertEquals(
                    "CN=server", subject(known.client("localhost", s.port())), "a client with a certificate is served");
        }
    }

    @Test
    void aPlainClientOnATlsPortIsToldSo() throws Exception {
        try (TransportServer s = tlsServer(ca.configure(base(), server, false, G), new ManualClock());
                TransportClientFactory plain = new TransportClientFactory(base(), "plain-client");
                TransportClientFactory tls = tlsClients(ca.configure(base(), null, false, G))) {
            RemoteException e = assertThrows(RemoteException.class, () -> plain.client("localhost", s.port()));
            assertEquals(StatusCode.VERSION_MISMATCH, e.status(), e.getMessage());
            assertTrue(e.getMessage().contains("answered with TLS"), e.getMessage());
            assertEquals("CN=server", subject(tls.client("localhost", s.port())), "the server keeps serving");
        }
    }

    @Test
    void aTlsClientOnAPlainPortIsToldSo() throws Exception {
        try (TransportServer s = new TransportServer(base(), "plain-server", "127.0.0.1", 0, new Handler());
                TransportClientFactory tls = tlsClients(ca.configure(base(), null, false, G));
                TransportClientFactory plain = new TransportClientFactory(base(), "plain-client")) {
            RemoteException e = assertThrows(RemoteException.class, () -> tls.client("localhost", s.port()));
            assertEquals(StatusCode.VERSION_MISMATCH, e.status(), e.getMessage());
            assertTrue(e.getMessage().contains("answered without TLS"), e.getMessage());
            assertTrue(e.getMessage().contains(G.enabled.key()), e.getMessage());
            assertEquals("plain", subject(plain.client("localhost", s.port())), "the server keeps serving");
        }
    }

    @Test
    void anUntrustedOrExpiredCertificateIsRefusedNamingWhy() throws Exception {
        try (TransportServer strange = tlsServer(otherCa.configure(base(), stranger, false, G), new ManualClock());
                TransportServer old = tlsServer(ca.configure(base(), expired, false, G), new ManualClock());
                TransportClientFactory f = tlsClients(ca.configure(base(), null, false, G))) {
            RemoteException e = assertThrows(RemoteException.class, () -> f.client("localhost", strange.port()));
            assertEquals(StatusCode.UNAUTHENTICATED, e.status(), e.getMessage());
            assertTrue(
                    e.getMessage().contains("signed by no CA") && e.getMessage().contains(G.trustFile.key()),
                    e.getMessage());
            e = assertThrows(RemoteException.class, () -> f.client("localhost", old.port()));
            assertEquals(StatusCode.UNAUTHENTICATED, e.status(), e.getMessage());
            assertTrue(e.getMessage().contains("expired"), e.getMessage());
        }
    }

    @Test
    void aRenewedCertificateServesNewConnectionsWhileOpenOnesContinue() throws Exception {
        Path live = dir.resolve("live");
        Files.createDirectories(live);
        TestCertificates.Issued files = new TestCertificates.Issued(live.resolve("tls.crt"), live.resolve("tls.key"));
        server.copyOver(files);
        ManualClock clock = new ManualClock();
        EstuaryConf conf = ca.configure(base(), files, false, G).set(TlsConfig.RELOAD_INTERVAL, "10s");
        try (TransportServer s = tlsServer(conf, clock);
                TransportClientFactory first = tlsClients(ca.configure(base(), null, false, G));
                TransportClientFactory second = tlsClients(ca.configure(base(), null, false, G));
                TransportClientFactory third = tlsClients(ca.configure(base(), null, false, G))) {
            TransportClient old = first.client("localhost", s.port());
            assertEquals("CN=server", subject(old));

            renewed.copyOver(files);
            Files.write(files.keyFile, "not a key".getBytes(StandardCharsets.US_ASCII));
            clock.advanceMillis(10_000);
            assertEquals(
                    "CN=server",
                    subject(second.client("localhost", s.port())),
                    "files that cannot be used leave the previous certificate in use");

            renewed.copyOver(files);
            clock.advanceMillis(10_000);
            assertEquals(
                    "CN=renewed",
                    subject(third.client("localhost", s.port())),
                    "a new connection, the new certificate");
            assertEquals("CN=server", subject(old), "the open connection continues");
        }
    }

    @Test
    void aCertificateReplacedBeforeItsKeyKeepsThePreviousPairUntilBothAreNew() throws Exception {
        Path live = dir.resolve("half");
        Files.createDirectories(live);
        TestCertificates.Issued files = new TestCertificates.Issued(live.resolve("tls.crt"), live.resolve("tls.key"));
        server.copyOver(files);
        ManualClock clock = new ManualClock();
        EstuaryConf conf = ca.configure(base(), files, false, G).set(TlsConfig.RELOAD_INTERVAL, "10s");
        try (TransportServer s = tlsServer(conf, clock);
                TransportClientFactory first = tlsClients(ca.configure(base(), null, false, G));
                TransportClientFactory second = tlsClients(ca.configure(base(), null, false, G))) {
            // A renewal caught between its two writes: the new certificate, the old key (they do not match).
            Files.copy(renewed.certFile, files.certFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            clock.advanceMillis(10_000);
            assertEquals(
                    "CN=server",
                    subject(first.client("localhost", s.port())),
                    "a certificate without its key leaves the previous pair in use");

            Files.copy(renewed.keyFile, files.keyFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            clock.advanceMillis(10_000);
            assertEquals("CN=renewed", subject(second.client("localhost", s.port())), "both written: the new pair");
        }
    }

    @Test
    void anUnusableKeyFileFailsAtStartNamingIt() throws Exception {
        EstuaryConf missing = ca.configure(base(), server, false, G)
                .set(G.keyFile, dir.resolve("nope.key").toString());
        TlsSetupException e = assertThrows(TlsSetupException.class, () -> ServerTls.fromConf(missing, G));
        assertTrue(e.getMessage().contains("nope.key") && e.getMessage().contains(G.keyFile.key()), e.getMessage());

        Path garbage = dir.resolve("garbage.key");
        Files.write(
                garbage,
                "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".getBytes(StandardCharsets.US_ASCII));
        EstuaryConf bad = ca.configure(base(), server, false, G).set(G.keyFile, garbage.toString());
        e = assertThrows(TlsSetupException.class, () -> ServerTls.fromConf(bad, G));
        assertTrue(e.getMessage().contains("garbage.key") && e.getMessage().contains("cannot be used"), e.getMessage());

        EstuaryConf noKey = ca.configure(base(), null, false, G);
        e = assertThrows(TlsSetupException.class, () -> ServerTls.fromConf(noKey, G));
        assertTrue(e.getMessage().contains(G.certFile.key()), e.getMessage());
    }
}
