package io.estuary.worker.storage;

import java.io.File;

/** A partition file after commit: its length and where each chunk starts. Immutable; served to readers. */
public final class CommittedFile {
  private final File file;
  private final long[] chunkOffsets;
  private final long length;
  private final Disk disk;

  public CommittedFile(File file, long[] chunkOffsets, long length, Disk disk) {
    this.disk = disk;
    this.file = file;
    this.chunkOffsets = chunkOffsets;
    this.length = length;
  }

  public File file() { return file; }
  public Disk disk() { return disk; }
  public long length() { return length; }
  public int numChunks() { return chunkOffsets.length; }

  public long chunkOffset(int i) {
    return chunkOffsets[i];
  }

  public long chunkLength(int i) {
    long end = i + 1 < chunkOffsets.length ? chunkOffsets[i + 1] : length;
    return end - chunkOffsets[i];
  }
}
