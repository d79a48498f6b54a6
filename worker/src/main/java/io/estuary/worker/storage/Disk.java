package io.estuary.worker.storage;

import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.DiskStatus;
import java.io.File;
import java.util.concurrent.atomic.AtomicInteger;

/** One storage directory (one disk): where its partition files live, its flusher, and its health. */
public final class Disk {
  private final File dir;
  private final DiskFlusher flusher;
  private final long reserveBytes;
  private final AtomicInteger activeSlots = new AtomicInteger();
  private volatile String failure;
  private volatile double recentFetchMicros;

  /** Records how long serving one chunk from this disk took (an exponentially weighted mean). */
  public synchronized void recordFetch(long nanos) {
    double micros = nanos / 1000.0;
    recentFetchMicros = recentFetchMicros == 0 ? micros : recentFetchMicros * 0.8 + micros * 0.2;
  }

  public Disk(File dir, int flushThreads, long reserveBytes) {
    this.dir = dir;
    this.reserveBytes = reserveBytes;
    this.flusher = new DiskFlusher(dir.getName(), flushThreads);
  }

  public String mountPoint() {
    return dir.getAbsolutePath();
  }

  public File dir() {
    return dir;
  }

  public DiskFlusher flusher() {
    return flusher;
  }

  public AtomicInteger activeSlots() {
    return activeSlots;
  }

  /** Marks the disk failed after an I/O error; it gets no new slots. */
  public void markFailed(String reason) {
    if (failure == null) failure = reason;
  }

  public String failure() {
    return failure;
  }

  public DiskStatus status() {
    if (failure != null || !dir.isDirectory()) return DiskStatus.DISK_FAILED;
    return dir.getUsableSpace() < reserveBytes ? DiskStatus.DISK_FULL : DiskStatus.DISK_HEALTHY;
  }

  public DiskInfo info() {
    return DiskInfo.newBuilder()
        .setMountPoint(mountPoint())
        .setUsableBytes(dir.getUsableSpace())
        .setStatus(status())
        .setActiveSlots(activeSlots.get())
        .setAvgFlushMicros(flusher.averageFlushMicros())
        .setAvgFetchMicros((long) recentFetchMicros)
        .build();
  }
}
