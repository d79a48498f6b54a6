package io.estuary.common;

/**
 * Version of the protocol. Every connection starts with a handshake exchanging versions (network's
 * {@code Handshake}), so peers that do not speak each other's version part at connect, on every port, with a
 * message naming both; control requests carry the version too. Raised with every change to a frame's layout (3: push
 * headers carry a flags byte; 4: the connection handshake; 5: stream close frames and the UNKNOWN_STREAM status).
 */
public final class ProtocolVersion {
    private ProtocolVersion() {}

    public static final int CURRENT = 5;
}
