package io.estuary.network.tls;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import io.estuary.testing.TestCertificates;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link KeyPairCheck}: a matching pair passes, a certificate with another key is refused, other key forms are left to Netty. */
class KeyPairCheckTest {
    static final TlsConfig.Group G = TlsConfig.Group.INTERNAL;

    @TempDir
    static Path dir;

    static TestCertificates ca;
    static TestCertificates.Issued one;
    static TestCertificates.Issued two;

    @BeforeAll
    static void certificates() throws Exception {
        ca = TestCertificates.authority(dir, "check");
        one = ca.issue("one");
        two = ca.issue("two");
    }

    static TlsFiles files(Path cert, Path key) throws TlsSetupException {
        EstuaryConf conf = new EstuaryConf().set(G.certFile, cert.toString()).set(G.keyFile, key.toString());
        return TlsFiles.configured(conf, G).read();
    }

    @Test
    void aCertificateWithItsOwnKeyPasses() throws Exception {
        KeyPairCheck.check(files(one.certFile, one.keyFile));
        KeyPairCheck.check(files(two.certFile, two.keyFile));
    }

    @Test
    void aCertificateWithAnotherKeyIsRefusedNamingBothKeys() throws Exception {
        TlsSetupException e =
                assertThrows(TlsSetupException.class, () -> KeyPairCheck.check(files(two.certFile, one.keyFile)));
        assertTrue(
                e.getMessage().contains(G.keyFile.key())
                        && e.getMessage().contains(G.certFile.key())
                        && e.getMessage().contains(one.keyFile.toString()),
                e.getMessage());
        // Netty alone would build a context from them, whose every handshake fails; the builders refuse them first.
        assertThrows(TlsSetupException.class, () -> SslContexts.server(files(two.certFile, one.keyFile)));
    }

    @Test
    void aKeyNotInPkcs8PemIsLeftToNettysOwnError() throws Exception {
        Path notPem = dir.resolve("not-pem.key");
        Files.write(notPem, "not a key".getBytes(StandardCharsets.US_ASCII));
        KeyPairCheck.check(files(one.certFile, notPem));
        TlsSetupException e =
                assertThrows(TlsSetupException.class, () -> SslContexts.server(files(one.certFile, notPem)));
        assertTrue(e.getMessage().contains("PKCS#8"), e.getMessage());
    }
}
