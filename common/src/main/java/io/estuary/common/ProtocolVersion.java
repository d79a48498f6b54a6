package io.estuary.common;

/**
 * Version of the protocol. Every connection starts with a handshake exchanging versions (network's
 * {@code Handshake}), so peers that do not speak each other's version part at connect, on every port, with a
 * message naming both; control requests carry the version too. Raised with every change to a frame's layout (3: push
 * headers carry a flags byte; 4: the connection handshake; 5: stream close frames and the UNKNOWN_STREAM status; 6: the authentication exchange after the version handshake).
 *
 * <p>A release speaks every version from {@link #OLDEST} to {@link #CURRENT}: its own, and the previous release's, so
 * clients and servers of two neighbouring releases work together through a rolling upgrade (docs/upgrading.md).
 * A change to a frame raises {@code CURRENT} and keeps the old layout readable while {@code OLDEST} still names it.
 * The release each version belongs to is in {@code io.estuary.common.release.Formats}.
 */
public final class ProtocolVersion {
    private ProtocolVersion() {}

    public static final int CURRENT = 6;

    /** The oldest version this release still speaks: the previous release's newest (release 0.1.0 spoke only 5). */
    public static final int OLDEST = 5;
}
