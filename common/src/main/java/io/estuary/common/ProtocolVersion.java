package io.estuary.common;

/** Version of the control protocol; peers refuse requests of a version they do not speak, and say so. */
public final class ProtocolVersion {
  private ProtocolVersion() {}

  public static final int CURRENT = 2;
}
