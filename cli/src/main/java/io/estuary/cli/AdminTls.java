package io.estuary.cli;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * The CLI's side of the admin port group's TLS ({@code estuary.tls.admin.*}): an {@link SSLContext} built with the
 * JDK alone (the CLI carries no Netty) from the same PEM files the servers read: the trust bundle the masters'
 * certificates must chain to (empty: the JVM's trust store), and with {@code clientAuth} the certificate chain and
 * PKCS#8 key it presents. TLS 1.3 and 1.2 only; the server's certificate must name the host connected to unless
 * {@code estuary.tls.verifyHostname=false}. Immutable.
 */
final class AdminTls {
    static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

    private final SSLContext context;
    private final String trustFile;
    private final boolean clientAuth;

    private AdminTls(SSLContext context, String trustFile, boolean clientAuth) {
        this.context = context;
        this.trustFile = trustFile;
        this.clientAuth = clientAuth;
    }

    /**
     * TLS for the CLI, or null for plain HTTP: on with {@code --tls} ({@code forced}), with {@code --trust-file}, or
     * with {@code estuary.tls.admin.enabled=true} in the configuration; {@code trustFileOption} overrides the
     * configuration's trust file. Files that cannot be used fail with a usage error naming the file and its key.
     */
    static AdminTls fromConf(EstuaryConf conf, boolean forced, String trustFileOption) throws CliException {
        TlsConfig.Group g = TlsConfig.Group.ADMIN;
        if (!forced && trustFileOption == null && !conf.get(g.enabled)) return null;
        String trust = trustFileOption != null
                ? trustFileOption
                : conf.get(g.trustFile).trim();
        String trustKey = trustFileOption != null ? "--trust-file" : g.trustFile.key();
        boolean clientAuth = conf.get(g.clientAuth);
        try {
            TrustManager[] tms = trustManagers(trust, trustKey, conf.get(TlsConfig.VERIFY_HOSTNAME));
            javax.net.ssl.KeyManager[] kms = null;
            if (clientAuth) {
                String cert = conf.get(g.certFile).trim();
                String key = conf.get(g.keyFile).trim();
                if (cert.isEmpty() || key.isEmpty()) {
                    throw new CliException(
                            CliException.USAGE,
                            g.clientAuth.key() + " is true but " + g.certFile.key() + " and " + g.keyFile.key()
                                    + " are not both set: the servers want a client certificate");
                }
                kms = keyManagers(cert, key);
            }
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kms, tms, null);
            return new AdminTls(ctx, trust.isEmpty() ? null : trust, clientAuth);
        } catch (GeneralSecurityException e) {
            throw new CliException(CliException.USAGE, "cannot set up TLS for the admin port: " + e.getMessage());
        }
    }

    SSLContext context() {
        return context;
    }

    /** For each connection: TLS 1.3 and 1.2 only. */
    SSLParameters parameters() {
        SSLParameters p = context.getDefaultSSLParameters();
        p.setProtocols(PROTOCOLS.clone());
        return p;
    }

    /** Where the trusted CAs come from, for messages. */
    String trustSource() {
        return trustFile != null ? "the trust bundle " + trustFile : "the JVM's default trust store";
    }

    boolean clientAuth() {
        return clientAuth;
    }

    private static TrustManager[] trustManagers(String file, String key, boolean verifyHostname)
            throws CliException, GeneralSecurityException {
        TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        if (file.isEmpty()) {
            f.init((KeyStore) null);
        } else {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            try {
                store.load(null, null);
            } catch (IOException e) {
                throw new GeneralSecurityException(e);
            }
            int i = 0;
            for (X509Certificate c : certificates(file, key)) store.setCertificateEntry("ca-" + i++, c);
            if (i == 0) throw new CliException(CliException.USAGE, file + " (" + key + ") holds no PEM certificate");
            f.init(store);
        }
        TrustManager[] tms = f.getTrustManagers();
        if (verifyHostname) return tms; // the HTTP client asks the trust manager to check the host (HTTPS rules)
        List<TrustManager> out = new ArrayList<>();
        for (TrustManager tm : tms) out.add(tm instanceof X509TrustManager ? new AnyHost((X509TrustManager) tm) : tm);
        return out.toArray(new TrustManager[0]);
    }

    private static javax.net.ssl.KeyManager[] keyManagers(String certFile, String keyFile)
            throws CliException, GeneralSecurityException {
        List<X509Certificate> chain = certificates(certFile, TlsConfig.Group.ADMIN.certFile.key());
        if (chain.isEmpty()) {
            throw new CliException(
                    CliException.USAGE,
                    certFile + " (" + TlsConfig.Group.ADMIN.certFile.key() + ") holds no PEM certificate");
        }
        PrivateKey key = privateKey(keyFile);
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        try {
            store.load(null, null);
        } catch (IOException e) {
            throw new GeneralSecurityException(e);
        }
        char[] none = new char[0];
        store.setKeyEntry("client", key, none, chain.toArray(new Certificate[0]));
        KeyManagerFactory f = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        f.init(store, none);
        return f.getKeyManagers();
    }

    private static List<X509Certificate> certificates(String file, String key) throws CliException {
        try (InputStream in = Files.newInputStream(Paths.get(file))) {
            Collection<? extends Certificate> all =
                    CertificateFactory.getInstance("X.509").generateCertificates(in);
            List<X509Certificate> out = new ArrayList<>();
            for (Certificate c : all) out.add((X509Certificate) c);
            return out;
        } catch (IOException e) {
            throw new CliException(CliException.USAGE, "cannot read " + file + " (" + key + "): " + e);
        } catch (CertificateException e) {
            throw new CliException(
                    CliException.USAGE, file + " (" + key + ") is not a PEM certificate bundle: " + e.getMessage());
        }
    }

    /** An unencrypted PKCS#8 key ({@code BEGIN PRIVATE KEY}), as cert-manager writes it: RSA, EC or Ed25519. */
    private static PrivateKey privateKey(String file) throws CliException {
        String key = TlsConfig.Group.ADMIN.keyFile.key();
        String pem;
        try {
            pem = new String(Files.readAllBytes(Path.of(file)), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new CliException(CliException.USAGE, "cannot read " + file + " (" + key + "): " + e);
        }
        int begin = pem.indexOf("-----BEGIN PRIVATE KEY-----");
        int end = pem.indexOf("-----END PRIVATE KEY-----");
        if (begin < 0 || end < begin) {
            throw new CliException(
                    CliException.USAGE,
                    file + " (" + key + ") holds no unencrypted PKCS#8 key (-----BEGIN PRIVATE KEY-----)");
        }
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(pem.substring(begin + 27, end));
        } catch (IllegalArgumentException e) {
            throw new CliException(CliException.USAGE, file + " (" + key + ") is not valid PEM: " + e.getMessage());
        }
        for (String alg : new String[] {"RSA", "EC", "Ed25519", "Ed448"}) {
            try {
                return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException notThisOne) {
                // try the next algorithm
            }
        }
        throw new CliException(CliException.USAGE, file + " (" + key + ") is not an RSA, EC or EdDSA PKCS#8 key");
    }

    /**
     * Checks the chain against the trusted CAs but not the host name ({@code estuary.tls.verifyHostname=false}): the
     * JDK checks the name inside the engine-aware calls, so they go to the plain ones.
     */
    private static final class AnyHost extends X509ExtendedTrustManager {
        private final X509TrustManager chain;

        AnyHost(X509TrustManager chain) {
            this.chain = chain;
        }

        @Override
        public void checkClientTrusted(X509Certificate[] c, String authType, Socket s) throws CertificateException {
            chain.checkClientTrusted(c, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] c, String authType, Socket s) throws CertificateException {
            chain.checkServerTrusted(c, authType);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] c, String authType, SSLEngine e) throws CertificateException {
            chain.checkClientTrusted(c, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] c, String authType, SSLEngine e) throws CertificateException {
            chain.checkServerTrusted(c, authType);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] c, String authType) throws CertificateException {
            chain.checkClientTrusted(c, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] c, String authType) throws CertificateException {
            chain.checkServerTrusted(c, authType);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return chain.getAcceptedIssuers();
        }
    }
}
