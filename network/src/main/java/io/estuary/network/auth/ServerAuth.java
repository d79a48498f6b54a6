package io.estuary.network.auth;

import java.util.Objects;

/**
 * How a server's port authenticates the connections it accepts (the handshake in {@link AuthExchange}):
 *
 * <ul>
 *   <li>{@link #off()}: nobody proves anything; every connection is {@link Identity#UNCHECKED}, as before
 *       authentication existed.
 *   <li>{@link #enforce}: a peer proves the identity it names with that identity's secret ({@link SecretLookup});
 *       an anonymous peer is admitted as {@link Identity#ANONYMOUS} only where {@code admitsAnonymous} (the master's
 *       RPC port, to register an application), a peer of protocol 5 (release 0.1.0, which cannot authenticate) is
 *       refused.
 *   <li>{@link #permissive}: for a rolling upgrade; a peer that names an identity proves it as in enforce mode (a
 *       wrong proof is refused), anonymous peers and protocol-5 peers are admitted as {@link Identity#UNCHECKED},
 *       counted and logged.
 * </ul>
 *
 * Immutable.
 */
public final class ServerAuth {
    /** How long a handshake waits for {@link SecretLookup#secretOf} before refusing the connection. */
    public static final long DEFAULT_LOOKUP_TIMEOUT_MS = 30_000;

    /** The three ways a port can authenticate. */
    public enum Mode {
        OFF,
        ENFORCE,
        PERMISSIVE
    }

    private static final ServerAuth OFF = new ServerAuth(Mode.OFF, null, false, DEFAULT_LOOKUP_TIMEOUT_MS);

    private final Mode mode;
    private final SecretLookup lookup;
    private final boolean admitsAnonymous;
    private final long lookupTimeoutMs;

    private ServerAuth(Mode mode, SecretLookup lookup, boolean admitsAnonymous, long lookupTimeoutMs) {
        this.mode = mode;
        this.lookup = lookup;
        this.admitsAnonymous = admitsAnonymous;
        this.lookupTimeoutMs = lookupTimeoutMs;
    }

    /** Authentication off: every connection is {@link Identity#UNCHECKED}. */
    public static ServerAuth off() {
        return OFF;
    }

    /**
     * Every peer proves an identity whose secret {@code lookup} knows; anonymous peers are admitted (as
     * {@link Identity#ANONYMOUS}) only when {@code admitsAnonymous}.
     */
    public static ServerAuth enforce(SecretLookup lookup, boolean admitsAnonymous) {
        return new ServerAuth(
                Mode.ENFORCE, Objects.requireNonNull(lookup, "lookup"), admitsAnonymous, DEFAULT_LOOKUP_TIMEOUT_MS);
    }

    /** Peers naming an identity prove it; the others (anonymous, protocol 5) are admitted as unchecked. */
    public static ServerAuth permissive(SecretLookup lookup) {
        return new ServerAuth(
                Mode.PERMISSIVE, Objects.requireNonNull(lookup, "lookup"), true, DEFAULT_LOOKUP_TIMEOUT_MS);
    }

    /** The same, refusing a connection whose secret lookup has not completed within {@code millis}. */
    public ServerAuth withLookupTimeoutMs(long millis) {
        if (millis <= 0) throw new IllegalArgumentException("lookup timeout must be positive: " + millis);
        return new ServerAuth(mode, lookup, admitsAnonymous, millis);
    }

    public Mode mode() {
        return mode;
    }

    public boolean isOff() {
        return mode == Mode.OFF;
    }

    /** Where secrets are found; null when off. */
    public SecretLookup lookup() {
        return lookup;
    }

    /** Whether an anonymous peer is admitted (always in permissive mode, never when off: there it is unchecked). */
    public boolean admitsAnonymous() {
        return admitsAnonymous;
    }

    public long lookupTimeoutMs() {
        return lookupTimeoutMs;
    }

    @Override
    public String toString() {
        switch (mode) {
            case OFF:
                return "authentication off";
            case ENFORCE:
                return admitsAnonymous ? "authentication enforced, anonymous admitted" : "authentication enforced";
            default:
                return "authentication permissive";
        }
    }
}
