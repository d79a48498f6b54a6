package io.estuary.network.tls;

import io.estuary.common.util.EstuaryException;

/** The TLS files of a port group cannot be used: unreadable, not PEM, a key that does not match, a missing key. */
public final class TlsSetupException extends EstuaryException {
    private static final long serialVersionUID = 1L;

    TlsSetupException(String message, Throwable cause) {
        super(message, cause);
    }
}
