package io.estuary.network.tls;

import io.estuary.common.config.TlsConfig;
import io.estuary.common.status.StatusCode;
import io.netty.handler.ssl.NotSslRecordException;
import java.nio.channels.ClosedChannelException;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import javax.net.ssl.SSLException;

/**
 * Puts a failed TLS handshake into words that name the cause and the key to look at: plain on one side and TLS on
 * the other, a certificate that is not trusted, expired or names another host, a client certificate missing or
 * refused. Stateless.
 */
final class TlsFailures {
    private TlsFailures() {}

    /** A failure as the client sees it, with the status its caller acts on. */
    static final class Described {
        final StatusCode status;
        final String message;

        Described(StatusCode status, String message) {
            this.status = status;
            this.message = message;
        }
    }

    /** Whether {@code t} (or a cause) comes from TLS: such failures are the guards' to report. */
    static boolean isTls(Throwable t) {
        return find(t, SSLException.class) != null;
    }

    static Described client(String remote, TlsConfig.Group g, Throwable t) {
        String server = "the server at " + remote;
        if (find(t, NotSslRecordException.class) != null) {
            return new Described(
                    StatusCode.VERSION_MISMATCH,
                    server + " answered without TLS: its port has TLS off while this client has " + g.enabled.key()
                            + "=true; set it the same on both sides");
        }
        if (find(t, CertificateExpiredException.class) != null
                || find(t, CertificateNotYetValidException.class) != null) {
            return new Described(
                    StatusCode.UNAUTHENTICATED,
                    server + " presented a certificate that is expired or not yet valid: " + rootMessage(t));
        }
        if (find(t, CertPathBuilderException.class) != null || find(t, CertPathValidatorException.class) != null) {
            return new Described(
                    StatusCode.UNAUTHENTICATED,
                    server + " presented a certificate signed by no CA in this client's " + g.trustFile.key() + ": "
                            + rootMessage(t));
        }
        String msg = String.valueOf(rootMessage(t));
        // The JDK names TLS alerts in lower case (certificate_required), BoringSSL in upper (..._CERTIFICATE_REQUIRED).
        String alert = msg.toLowerCase(java.util.Locale.ROOT);
        if (msg.contains("No subject alternative") || msg.contains("No name matching")) {
            return new Described(
                    StatusCode.UNAUTHENTICATED,
                    server + " presented a certificate that does not name that host (" + msg + "): give the "
                            + "certificate that host as a subject alternative name, or set "
                            + TlsConfig.VERIFY_HOSTNAME.key() + "=false in a test setup");
        }
        if (alert.contains("certificate_required")
                || alert.contains("bad_certificate")
                || alert.contains("unknown_ca")
                || alert.contains("certificate_unknown")) {
            return new Described(
                    StatusCode.UNAUTHENTICATED,
                    server + " refused this client's certificate (" + msg + "): it requires mutual TLS ("
                            + g.clientAuth.key() + "); set " + g.certFile.key() + " and " + g.keyFile.key()
                            + " here to a certificate its trust bundle accepts");
        }
        if (find(t, ClosedChannelException.class) != null || msg.contains("closed")) {
            return new Described(
                    StatusCode.CONNECTION_FAILED,
                    server + " closed the connection during the TLS handshake (" + msg + ")");
        }
        return new Described(StatusCode.CONNECTION_FAILED, "the TLS handshake with " + server + " failed: " + msg);
    }

    /** A failure as the server logs it: what the peer did and which key to look at. */
    static String server(TlsConfig.Group g, Throwable t) {
        if (find(t, NotSslRecordException.class) != null) {
            return "sent plain bytes on this TLS port: a client with " + g.enabled.key() + "=false; set it the same "
                    + "on both sides";
        }
        String msg = String.valueOf(rootMessage(t));
        String alert = msg.toLowerCase(java.util.Locale.ROOT);
        if (find(t, CertificateExpiredException.class) != null
                || find(t, CertificateNotYetValidException.class) != null) {
            return "presented a client certificate that is expired or not yet valid: " + msg;
        }
        if (find(t, CertPathBuilderException.class) != null || find(t, CertPathValidatorException.class) != null) {
            return "presented a client certificate signed by no CA in " + g.trustFile.key() + ": " + msg;
        }
        if (msg.contains("Empty client certificate chain")
                || msg.contains("null cert chain")
                || alert.contains("peer_did_not_return_a_certificate")) {
            return "presented no client certificate, and " + g.clientAuth.key() + " requires one";
        }
        if (alert.contains("certificate_unknown")
                || alert.contains("bad_certificate")
                || alert.contains("unknown_ca")) {
            return "does not trust this server's certificate (" + msg + "): check its " + g.trustFile.key();
        }
        return "failed the TLS handshake: " + msg;
    }

    private static String rootMessage(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) root = root.getCause();
        return root.getMessage() != null ? root.getMessage() : root.toString();
    }

    private static <T extends Throwable> T find(Throwable t, Class<T> type) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (type.isInstance(c)) return type.cast(c);
        }
        return null;
    }
}
