package io.estuary.network.protocol;

import io.estuary.common.ProtocolVersion;

/**
 * The protocol versions one side of a connection speaks, {@code oldest} to {@code newest} inclusive. Immutable.
 */
public final class ProtocolRange {
    /** What this release speaks. */
    public static final ProtocolRange THIS_RELEASE = new ProtocolRange(ProtocolVersion.OLDEST, ProtocolVersion.CURRENT);

    private final int oldest;
    private final int newest;

    public ProtocolRange(int oldest, int newest) {
        if (oldest > newest) throw new IllegalArgumentException("empty protocol range " + oldest + ".." + newest);
        this.oldest = oldest;
        this.newest = newest;
    }

    /** A side that speaks only {@code version}, as release 0.1.0 did. */
    public static ProtocolRange only(int version) {
        return new ProtocolRange(version, version);
    }

    public int oldest() {
        return oldest;
    }

    public int newest() {
        return newest;
    }

    public boolean contains(int version) {
        return version >= oldest && version <= newest;
    }

    /** "protocol 5" or "protocols 5 to 6": the words of every mismatch message. */
    @Override
    public String toString() {
        return oldest == newest ? "protocol " + oldest : "protocols " + oldest + " to " + newest;
    }
}
