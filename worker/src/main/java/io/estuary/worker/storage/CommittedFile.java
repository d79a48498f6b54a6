package io.estuary.worker.storage;

import java.io.File;

/**
 * A partition file after commit: its length and where each chunk starts. Immutable; served to readers. A file whose
 * disk has failed since the commit is lost for good, even once the disk is used again: readers go to its replica.
 */
public final class CommittedFile {
  private final File file;
  private final long[] chunkOffsets;
  private final long length;
  private final Disk disk;
  private final int diskFailuresAtCommit;
  /** Which maps lie where, or null (a file recovered after a restart, or index off): map ranges read it whole. */
  private final MapIndex mapIndex;

  public CommittedFile(File file, long[] chunkOffsets, long length, Disk disk) {
    this(file, chunkOffsets, length, disk, null);
  }

  public CommittedFile(File file, long[] chunkOffsets, long length, Disk disk, MapIndex mapIndex) {
    this.mapIndex = mapIndex;
    this.disk = disk;
    this.file = file;
    this.chunkOffsets = chunkOffsets;
    this.length = length;
    this.diskFailuresAtCommit = disk == null ? 0 : disk.failures();
  }

  /** Why this file can no longer be served (its disk failed since it was committed), or null while it can. */
  public String lostReason() {
    if (disk == null) return null;
    String failure = disk.failure();
    if (failure != null) return "its disk " + disk.mountPoint() + " failed: " + failure;
    if (disk.failures() != diskFailuresAtCommit) {
      return "its disk " + disk.mountPoint() + " failed after it was committed (" + disk.reason() + ")";
    }
    return null;
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

  public MapIndex mapIndex() {
    return mapIndex;
  }

  /** Every chunk of the file. */
  public FileSegments allChunks() {
    long[] lengths = new long[chunkOffsets.length];
    for (int i = 0; i < lengths.length; i++) lengths[i] = chunkLength(i);
    return new FileSegments(chunkOffsets.clone(), lengths);
  }

  /**
   * What a reader of maps [startMap, endMap) is served: with a map index, only the ranges that may hold those maps'
   * batches; without one, or for {@code endMap <= startMap} (every map), every chunk.
   */
  public FileSegments segmentsFor(int startMap, int endMap) {
    if (mapIndex == null || endMap <= startMap) return allChunks();
    return mapIndex.select(startMap, endMap, chunkOffsets);
  }
}
