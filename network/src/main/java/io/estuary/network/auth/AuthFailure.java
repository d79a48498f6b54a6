package io.estuary.network.auth;

/** Why a connection failed the authentication handshake: the label its counter carries. */
public enum AuthFailure {
    /** The peer's proof (or, on the client, the server's) does not match the identity's secret. */
    WRONG_PROOF,
    /** The server knows no secret for the identity named (an application never registered, or expired). */
    UNKNOWN_IDENTITY,
    /** Finding the identity's secret failed or timed out. */
    LOOKUP_FAILED,
    /** An anonymous peer on a port that admits only authenticated ones. */
    ANONYMOUS_REFUSED,
    /** A peer of protocol 5 (release 0.1.0, which cannot authenticate) while authentication is enforced. */
    OLD_PROTOCOL,
    /** Bytes that are not the exchange: an unknown identity kind, an oversized field, a bad outcome. */
    MALFORMED,
    /** The connection closed (or went idle) before the exchange finished. */
    CUT;

    /** The label value metrics export: the constant's name in lower case. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
