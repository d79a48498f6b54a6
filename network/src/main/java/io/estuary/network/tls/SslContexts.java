package io.estuary.network.tls;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import javax.net.ssl.SSLException;

/**
 * Builds Netty {@link SslContext}s from a group's PEM files: TLS 1.3 and 1.2 only, with the provider
 * {@link TlsProviders} chooses (OpenSSL where netty-tcnative loads: the servers; the JDK's in client jars). Stateless.
 */
final class SslContexts {
    private SslContexts() {}

    static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

    static SslContext server(TlsFiles f) throws TlsSetupException {
        if (!f.hasKeyPair()) {
            throw new TlsSetupException(
                    f.group.enabled.key() + " is true but " + f.group.certFile.key() + " and " + f.group.keyFile.key()
                            + " are not both set: a TLS server needs its certificate and key",
                    null);
        }
        if (f.clientAuth && f.trustFile == null) {
            throw new TlsSetupException(
                    f.group.clientAuth.key() + " is true but " + f.group.trustFile.key()
                            + " is not set: name the CA bundle that signs the clients' certificates",
                    null);
        }
        KeyPairCheck.check(f);
        try {
            SslContextBuilder b = SslContextBuilder.forServer(f.cert(), f.key());
            if (f.clientAuth) b.trustManager(f.trust()).clientAuth(ClientAuth.REQUIRE);
            return b.sslProvider(TlsProviders.choose(f.provider))
                    .protocols(PROTOCOLS)
                    .build();
        } catch (SSLException | IllegalArgumentException e) {
            throw failed(f, e);
        }
    }

    static SslContext client(TlsFiles f) throws TlsSetupException {
        if (f.clientAuth && !f.hasKeyPair()) {
            throw new TlsSetupException(
                    f.group.clientAuth.key() + " is true but " + f.group.certFile.key() + " and "
                            + f.group.keyFile.key() + " are not both set: the servers want a client certificate",
                    null);
        }
        if (f.hasKeyPair()) KeyPairCheck.check(f);
        try {
            SslContextBuilder b = SslContextBuilder.forClient();
            if (f.trustFile != null) b.trustManager(f.trust());
            if (f.hasKeyPair()) b.keyManager(f.cert(), f.key());
            return b.sslProvider(TlsProviders.choose(f.provider))
                    .protocols(PROTOCOLS)
                    .build();
        } catch (SSLException | IllegalArgumentException e) {
            throw failed(f, e);
        }
    }

    private static TlsSetupException failed(TlsFiles f, Exception e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) root = root.getCause();
        String why = root == e ? e.getMessage() : e.getMessage() + " (" + root.getMessage() + ")";
        return new TlsSetupException(
                "the TLS files of the " + f.group.name + " group (" + f.describe() + ") cannot be used: " + why
                        + ". Expected PEM: a certificate chain, an unencrypted PKCS#8 key (BEGIN PRIVATE KEY), CA "
                        + "certificates",
                e);
    }
}
