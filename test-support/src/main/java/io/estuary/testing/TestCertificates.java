package io.estuary.testing;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A test certificate authority and the PEM files TLS tests need, made with the JDK's {@code keytool} (no extra
 * library): the CA's certificate as a trust bundle, and certificates it signs for {@code localhost} and
 * {@code 127.0.0.1} (as subject alternative names) with their PKCS#8 keys, the layout cert-manager writes. EC P-256
 * keys, made in about a second each. Not thread-safe: one per test class.
 */
public final class TestCertificates {
    private static final String PASS = "estuary-test";
    private final Path dir;
    private final String name;
    private final Path store;

    private TestCertificates(Path dir, String name) {
        this.dir = dir;
        this.name = name;
        this.store = dir.resolve(name + "-ca.p12");
    }

    /** A new CA named {@code name}, its files under {@code dir}. */
    public static TestCertificates authority(Path dir, String name) throws IOException {
        Files.createDirectories(dir);
        TestCertificates ca = new TestCertificates(dir, name);
        keytool(
                "-genkeypair",
                "-alias",
                "ca",
                "-keyalg",
                "EC",
                "-groupname",
                "secp256r1",
                "-dname",
                "CN=" + name + " test CA",
                "-ext",
                "bc:c",
                "-validity",
                "30",
                "-keystore",
                ca.store.toString(),
                "-storetype",
                "PKCS12",
                "-storepass",
                PASS);
        keytool(
                "-exportcert",
                "-rfc",
                "-alias",
                "ca",
                "-keystore",
                ca.store.toString(),
                "-storepass",
                PASS,
                "-file",
                ca.trustFile().toString());
        return ca;
    }

    /** The CA's certificate in PEM: the trust bundle clients (or mTLS servers) are given. */
    public Path trustFile() {
        return dir.resolve(name + "-ca.pem");
    }

    /** A certificate and key this CA signs, for localhost and 127.0.0.1, valid from yesterday for 30 days. */
    public Issued issue(String certName) throws IOException {
        return issue(certName, false);
    }

    /** As {@link #issue(String)}; {@code expired}: valid only from 10 days ago to 9 days ago. */
    public Issued issue(String certName, boolean expired) throws IOException {
        Path p12 = dir.resolve(certName + ".p12");
        Path csr = dir.resolve(certName + ".csr");
        Path crt = dir.resolve(certName + ".crt");
        keytool(
                "-genkeypair",
                "-alias",
                "key",
                "-keyalg",
                "EC",
                "-groupname",
                "secp256r1",
                "-dname",
                "CN=" + certName,
                "-validity",
                "30",
                "-keystore",
                p12.toString(),
                "-storetype",
                "PKCS12",
                "-storepass",
                PASS);
        keytool("-certreq", "-alias", "key", "-keystore", p12.toString(), "-storepass", PASS, "-file", csr.toString());
        List<String> gencert = new ArrayList<>();
        for (String a : new String[] {
            "-gencert",
            "-rfc",
            "-alias",
            "ca",
            "-keystore",
            store.toString(),
            "-storepass",
            PASS,
            "-infile",
            csr.toString(),
            "-outfile",
            crt.toString(),
            "-ext",
            "SAN=dns:localhost,ip:127.0.0.1",
            "-ext",
            "EKU=serverAuth,clientAuth"
        }) {
            gencert.add(a);
        }
        gencert.add("-startdate");
        gencert.add(expired ? "-10d" : "-1d");
        gencert.add("-validity");
        gencert.add(expired ? "1" : "30");
        keytool(gencert.toArray(new String[0]));
        Issued issued = new Issued(dir.resolve(certName + "-cert.pem"), dir.resolve(certName + "-key.pem"));
        // The chain: the certificate, then its CA's.
        String chain = new String(Files.readAllBytes(crt), StandardCharsets.US_ASCII)
                + new String(Files.readAllBytes(trustFile()), StandardCharsets.US_ASCII);
        Files.write(issued.certFile, chain.getBytes(StandardCharsets.US_ASCII));
        Files.write(issued.keyFile, pkcs8Pem(p12).getBytes(StandardCharsets.US_ASCII));
        return issued;
    }

    /**
     * Turns TLS on for {@code groups} in {@code conf}: trusting this CA, presenting {@code identity} (null: none, a
     * client without a certificate), requiring client certificates when {@code clientAuth}. Returns {@code conf}.
     */
    public EstuaryConf configure(EstuaryConf conf, Issued identity, boolean clientAuth, TlsConfig.Group... groups) {
        for (TlsConfig.Group g : groups) {
            conf.set(g.enabled, "true");
            conf.set(g.trustFile, trustFile().toString());
            conf.set(g.clientAuth, String.valueOf(clientAuth));
            conf.set(g.certFile, identity == null ? "" : identity.certFile.toString());
            conf.set(g.keyFile, identity == null ? "" : identity.keyFile.toString());
        }
        return conf;
    }

    /** A certificate file and its key file. */
    public static final class Issued {
        public final Path certFile;
        public final Path keyFile;

        public Issued(Path certFile, Path keyFile) {
            this.certFile = certFile;
            this.keyFile = keyFile;
        }

        /** Copies both files over {@code target}'s (replaced whole, as cert-manager renews them). */
        public void copyOver(Issued target) throws IOException {
            Files.copy(certFile, target.certFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            Files.copy(keyFile, target.keyFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
    }

    private static String pkcs8Pem(Path p12) throws IOException {
        try (InputStream in = Files.newInputStream(p12)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, PASS.toCharArray());
            PrivateKey key = (PrivateKey) ks.getKey("key", PASS.toCharArray());
            String b64 = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                    .encodeToString(key.getEncoded()); // PKCS#8 DER
            return "-----BEGIN PRIVATE KEY-----\n" + b64 + "\n-----END PRIVATE KEY-----\n";
        } catch (java.security.GeneralSecurityException e) {
            throw new IOException("cannot read the key from " + p12, e);
        }
    }

    private static void keytool(String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "keytool");
        cmd.add("-noprompt");
        for (String a : args) cmd.add(a);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
            byte[] buf = new byte[4096];
            try (InputStream in = p.getInputStream()) {
                for (int n; (n = in.read(buf)) > 0; ) bytes.write(buf, 0, n);
            }
            String out = new String(bytes.toByteArray(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IOException("keytool " + String.join(" ", args) + " failed: " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }
}
