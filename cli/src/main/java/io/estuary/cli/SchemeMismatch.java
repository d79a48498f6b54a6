package io.estuary.cli;

import io.estuary.common.config.TlsConfig;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * Why a call to an admin port failed, when the cause is TLS: the port speaks HTTPS and the CLI plain HTTP, or the
 * reverse, or the server's certificate is refused. Neither side says so itself (the JDK's HTTPS server closes a plain
 * connection without a byte; a plain server answers a TLS hello with garbage), so after a failure this class asks the
 * port directly: a TLS handshake that trusts anything (nothing is sent over it) tells an HTTPS port, an HTTP request
 * for {@code /health} with an {@code HTTP/} answer tells a plain one. Stateless.
 */
final class SchemeMismatch {
    private static final int PROBE_TIMEOUT_MS = 3_000;
    private static final String ENABLED = TlsConfig.ADMIN_ENABLED.key();

    private SchemeMismatch() {}

    /** The failure of a call to {@code endpoint} in words, naming the mismatch when there is one. */
    static String explain(String endpoint, AdminTls tls, IOException failure) {
        String what = "master " + endpoint;
        if (tls == null) {
            if (speaksTls(endpoint)) {
                return "the " + what + " speaks HTTPS (" + ENABLED + "=true there) and this CLI plain HTTP: run it "
                        + "with --tls (and --trust-file CA.pem), or set " + ENABLED + "=true and "
                        + TlsConfig.ADMIN_TRUST.key() + " in $ESTUARY_CONF_DIR/estuary-defaults.conf";
            }
            return String.valueOf(failure.getMessage());
        }
        if (speaksPlainHttp(endpoint)) {
            return "the " + what + " speaks plain HTTP (" + ENABLED + "=false there) and this CLI HTTPS (--tls, "
                    + "--trust-file or " + ENABLED + "=true): use the same on both sides";
        }
        String cause = rootMessage(failure);
        if (cause.contains("PKIX") || cause.contains("certification path")) {
            return "the " + what + " presented a certificate signed by no CA in " + tls.trustSource() + " ("
                    + TlsConfig.ADMIN_TRUST.key() + " or --trust-file): " + cause;
        }
        if (cause.contains("No subject alternative") || cause.contains("No name matching")) {
            return "the " + what + " presented a certificate that does not name the host connected to (" + cause
                    + "); connect by a name the certificate holds, or set " + TlsConfig.VERIFY_HOSTNAME.key()
                    + "=false for test certificates";
        }
        if (cause.contains("expired") || cause.contains("not yet valid")) {
            return "the " + what + " presented a certificate that is expired or not yet valid: " + cause;
        }
        if (!tls.clientAuth() && (failure instanceof SSLException || cause.contains("no bytes"))) {
            return "the " + what + " closed the TLS connection: if it requires client certificates ("
                    + TlsConfig.ADMIN_CLIENT_AUTH.key() + "=true there), set " + TlsConfig.ADMIN_CLIENT_AUTH.key()
                    + ", " + TlsConfig.ADMIN_CERT.key() + " and " + TlsConfig.ADMIN_KEY.key() + " here (" + cause
                    + ")";
        }
        return String.valueOf(failure.getMessage());
    }

    /** Whether {@code host:port} completes a TLS handshake (any certificate accepted: nothing is sent over it). */
    static boolean speaksTls(String endpoint) {
        try {
            SSLContext any = SSLContext.getInstance("TLS");
            any.init(null, new TrustManager[] {new TrustAnything()}, null);
            try (Socket raw = connect(endpoint);
                    SSLSocket s = (SSLSocket)
                            any.getSocketFactory().createSocket(raw, host(endpoint), port(endpoint), true)) {
                s.startHandshake();
                return true;
            }
        } catch (IOException | java.security.GeneralSecurityException | RuntimeException e) {
            return false;
        }
    }

    /** Whether {@code host:port} answers a plain HTTP request with an HTTP status line. */
    static boolean speaksPlainHttp(String endpoint) {
        try (Socket s = connect(endpoint)) {
            s.getOutputStream()
                    .write(("GET /health HTTP/1.1\r\nHost: " + endpoint + "\r\nConnection: close\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            InputStream in = s.getInputStream();
            byte[] head = new byte[5];
            int n = 0;
            for (int r; n < head.length && (r = in.read(head, n, head.length - n)) > 0; ) n += r;
            return n == head.length && new String(head, StandardCharsets.US_ASCII).equals("HTTP/");
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static Socket connect(String endpoint) throws IOException {
        Socket s = new Socket();
        try {
            s.connect(new InetSocketAddress(host(endpoint), port(endpoint)), PROBE_TIMEOUT_MS);
            s.setSoTimeout(PROBE_TIMEOUT_MS);
            return s;
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    private static String host(String endpoint) {
        String h = endpoint.substring(0, endpoint.lastIndexOf(':'));
        return h.startsWith("[") && h.endsWith("]") ? h.substring(1, h.length() - 1) : h;
    }

    private static int port(String endpoint) {
        return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    }

    private static String rootMessage(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) root = root.getCause();
        return String.valueOf(root.getMessage());
    }

    /** For the probe only: tells a TLS port from a plain one, and never carries data. */
    private static final class TrustAnything implements X509TrustManager {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {}

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {}

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
