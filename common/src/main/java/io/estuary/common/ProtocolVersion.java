package io.estuary.common;

/**
 * Version of the protocol; peers refuse control requests of a version they do not speak, and say so. Pushes carry no
 * version of their own: a client registers its shuffle (a control request) before it pushes, so a version mismatch
 * is refused there. Raised with every change to a frame's layout (3: push headers carry a flags byte).
 */
public final class ProtocolVersion {
  private ProtocolVersion() {}

  public static final int CURRENT = 3;
}
