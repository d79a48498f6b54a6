package io.estuary.worker.storage;

import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.common.util.EstuaryException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;

/**
 * Merges the pushes of one partition (one epoch) into one file. Pushed bytes are gathered in an off-heap flush
 * buffer; once it holds a flush buffer's worth it goes to the disk's flusher, which writes it at the file offset
 * fixed when it was queued (so several flusher threads may write one file safely). Chunk boundaries fall between
 * pushes, and a push holds only whole batches, so every chunk starts on a batch.
 *
 * <p>Copying a push into the flush buffer (one memcpy) frees the network buffer at once: a small push can never
 * pin a large frame. The memory tracker counts the flush buffer's capacity (what is really held) from allocation
 * until its write is done. A partly filled buffer can be written early ({@link #flushBuffered}) under memory
 * pressure or when it grows old; chunk boundaries do not depend on when flushes happen.
 *
 * <p>Thread-safe: appends, commits and early flushes synchronize on the writer; file writes run on the disk's
 * flusher threads at positions fixed under that lock.
 */
public final class PartitionFileWriter {
  private static final PooledByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
  private static final int INITIAL_BUFFER = 16 * 1024;

  private final String name;
  private final File file;
  private final Disk disk;
  private final MemoryTracker memory;
  private final int flushThreshold;
  private final long chunkSize;
  /** Guards opening, closing and deleting the file, never held while waiting for anything else. */
  private final Object fileLock = new Object();

  private ByteBuf pending;
  /** Capacity of {@code pending} counted in the memory tracker. */
  private int pendingCounted;
  private long pendingSinceNanos;
  private FileChannel channel;
  private long appended;
  private long flushAssigned;
  private long lastChunkStart;
  private final List<Long> chunkOffsets = new ArrayList<>();
  private int flushesInFlight;
  private Throwable error;
  private CompletableFuture<CommittedFile> commit;
  private volatile boolean destroyed;

  public PartitionFileWriter(String name, File file, Disk disk, MemoryTracker memory, long flushThreshold,
      long chunkSize) {
    this.name = name;
    this.file = file;
    this.disk = disk;
    this.memory = memory;
    this.flushThreshold = (int) flushThreshold;
    this.chunkSize = chunkSize;
  }

  public Disk disk() {
    return disk;
  }

  /** Bytes appended so far: the size the file will have. */
  public synchronized long size() {
    return appended;
  }

  /** Appends {@code data} (whole batches) and releases it. Fails for a committed, destroyed or failed partition. */
  public void append(ByteBuf data) {
    try {
      synchronized (this) {
        if (error != null) {
          throw new StatusException(StatusCode.DISK_FAILED, name + " cannot take data: an earlier write failed: "
              + error);
        }
        if (destroyed) {
          throw new StatusException(StatusCode.UNKNOWN_LOCATION, name + " was deleted (its shuffle expired or was "
              + "unregistered)");
        }
        if (commit != null) {
          throw new StatusException(StatusCode.STAGE_ENDED, name + " is already committed; a late push from a map "
              + "attempt that lost");
        }
        int n = data.readableBytes();
        if (n == 0) return;
        try {
          if (pending == null) {
            // Small at first: with thousands of partitions open, buffers sized for a full flush would hold the
            // memory limit before any fills. It doubles as data arrives.
            pending = ALLOC.directBuffer(Math.max(n, Math.min(flushThreshold, INITIAL_BUFFER)));
            pendingSinceNanos = System.nanoTime();
          }
          pending.ensureWritable(n);
        } catch (OutOfMemoryError e) { // Netty's direct memory is exhausted: this push waits, the worker lives
          throw new StatusException(StatusCode.RETRY_LATER, name + ": no direct memory for " + n + " more bytes ("
              + memory.held() + " held): " + e.getMessage());
        } finally {
          countCapacity();
        }
        if (appended == 0) {
          chunkOffsets.add(0L);
        } else if (appended > lastChunkStart && appended - lastChunkStart + n > chunkSize) {
          chunkOffsets.add(appended); // a chunk never grows past chunkSize unless one push alone is larger
          lastChunkStart = appended;
        }
        appended += n;
        pending.writeBytes(data);
        if (pending.readableBytes() >= flushThreshold) flushPending();
      }
    } finally {
      data.release();
    }
  }

  private void countCapacity() {
    int cap = pending == null ? 0 : pending.capacity();
    if (cap != pendingCounted) {
      memory.add(cap - pendingCounted);
      pendingCounted = cap;
    }
  }

  /** Bytes in the partly filled buffer, not yet queued for a write. */
  public synchronized int bufferedBytes() {
    return pending == null ? 0 : pending.readableBytes();
  }

  /** When the oldest byte in the buffer arrived ({@link System#nanoTime}), or 0 when nothing is buffered. */
  public synchronized long bufferedSinceNanos() {
    return pending == null || pending.readableBytes() == 0 ? 0 : pendingSinceNanos;
  }

  /** Whether the writer takes no more data (committed, deleted or failed), so it never needs an early flush. */
  public synchronized boolean retired() {
    return commit != null || destroyed || error != null;
  }

  /**
   * Queues the partly filled buffer for writing now instead of when it fills up. Returns the memory this will
   * free once written (0 when nothing was buffered or the writer is retired).
   */
  public synchronized long flushBuffered() {
    if (pending == null || pending.readableBytes() == 0 || commit != null || destroyed || error != null) return 0;
    long freed = pendingCounted;
    flushPending();
    return freed;
  }

  private void flushPending() {
    ByteBuf buf = pending;
    int counted = pendingCounted;
    pending = null;
    pendingCounted = 0;
    long position = flushAssigned;
    flushAssigned += buf.readableBytes();
    flushesInFlight++;
    memory.flushQueued(counted);
    try {
      disk.flusher().submit(() -> write(buf, counted, position));
    } catch (RejectedExecutionException e) { // the worker is shutting down
      flushesInFlight--;
      memory.flushDone(counted);
      memory.release(counted);
      buf.release();
      if (error == null) error = e;
    }
  }

  private void write(ByteBuf buf, int counted, long position) {
    try {
      FileChannel ch = channel();
      long p = position;
      for (ByteBuffer b : buf.nioBuffers()) {
        while (b.hasRemaining()) p += ch.write(b, p);
      }
    } catch (IOException | RuntimeException e) {
      synchronized (this) {
        if (error == null) error = e;
      }
      if (!destroyed) disk.markFailed("writing " + file + " failed: " + e);
    } finally {
      buf.release();
      memory.flushDone(counted);
      memory.release(counted);
      synchronized (this) {
        flushesInFlight--;
        finishCommitIfDone();
      }
    }
  }

  private FileChannel channel() throws IOException {
    synchronized (fileLock) {
      if (destroyed) throw new IOException(name + " was deleted");
      if (channel == null) {
        Files.createDirectories(file.getParentFile().toPath());
        channel = FileChannel.open(file.toPath(), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      }
      return channel;
    }
  }

  private void closeFile() throws IOException {
    synchronized (fileLock) {
      if (channel != null) channel.close();
    }
  }

  /** Flushes what is left and completes once every byte is on disk. Calling it again returns the same result. */
  public synchronized CompletableFuture<CommittedFile> commit() {
    if (commit != null) return commit;
    commit = new CompletableFuture<>();
    if (pending != null && pending.readableBytes() > 0) flushPending();
    finishCommitIfDone();
    return commit;
  }

  private void finishCommitIfDone() {
    if (commit == null || commit.isDone() || flushesInFlight > 0) return;
    try {
      closeFile();
    } catch (IOException e) {
      if (error == null) error = e;
    }
    if (error != null) {
      commit.completeExceptionally(new EstuaryException(name + " failed to write " + file + ": " + error, error));
      return;
    }
    long[] offsets = new long[chunkOffsets.size()];
    for (int i = 0; i < offsets.length; i++) offsets[i] = chunkOffsets.get(i);
    commit.complete(new CommittedFile(file, offsets, appended, disk));
  }

  /** Drops buffered data and deletes the file. */
  public void destroy() {
    synchronized (this) {
      if (destroyed) return;
      destroyed = true;
      if (pending != null) {
        memory.release(pendingCounted);
        pendingCounted = 0;
        pending.release();
        pending = null;
      }
    }
    synchronized (fileLock) {
      try {
        if (channel != null) channel.close();
      } catch (IOException ignored) {
        // deleting anyway
      }
      if (!file.delete() && file.exists()) file.deleteOnExit();
    }
  }

  @Override
  public String toString() {
    return name;
  }
}
