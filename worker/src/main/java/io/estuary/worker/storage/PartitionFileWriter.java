package io.estuary.worker.storage;

import io.estuary.common.util.EstuaryException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Merges the pushes of one partition (one epoch) into one file. Pushed bodies are kept, uncopied, in an off-heap
 * composite buffer; once it holds a flush buffer's worth it goes to the disk's flusher, which writes it at the file
 * offset fixed when it was queued (so several flusher threads may write one file safely). Chunk boundaries are
 * recorded between pushes, and a push holds only whole batches, so every chunk starts on a batch.
 */
public final class PartitionFileWriter {
  private final String name;
  private final File file;
  private final Disk disk;
  private final MemoryTracker memory;
  private final long flushThreshold;
  private final long chunkSize;

  private CompositeByteBuf pending;
  private FileChannel channel;
  private long appended;
  private long flushAssigned;
  private long lastChunkStart;
  private final List<Long> chunkOffsets = new ArrayList<>();
  private int flushesInFlight;
  private Throwable error;
  private CompletableFuture<CommittedFile> commit;
  private boolean destroyed;

  public PartitionFileWriter(String name, File file, Disk disk, MemoryTracker memory, long flushThreshold,
      long chunkSize) {
    this.name = name;
    this.file = file;
    this.disk = disk;
    this.memory = memory;
    this.flushThreshold = flushThreshold;
    this.chunkSize = chunkSize;
    this.pending = newBuffer();
  }

  private static CompositeByteBuf newBuffer() {
    return ByteBufAllocator.DEFAULT.compositeDirectBuffer(Integer.MAX_VALUE);
  }

  public Disk disk() {
    return disk;
  }

  /** Takes ownership of {@code data} (whole batches). Fails for a committed, destroyed or failed partition. */
  public synchronized void append(ByteBuf data) {
    if (error != null || commit != null || destroyed) {
      data.release();
      if (error != null) throw new EstuaryException(name + " cannot take data: an earlier write failed: " + error);
      if (destroyed) throw new EstuaryException(name + " was deleted (its shuffle expired or was unregistered)");
      throw new EstuaryException(name + " is already committed; a late push from a map attempt that lost");
    }
    int n = data.readableBytes();
    if (n == 0) {
      data.release();
      return;
    }
    if (appended == 0) {
      chunkOffsets.add(0L);
    } else if (appended - lastChunkStart >= chunkSize) {
      chunkOffsets.add(appended);
      lastChunkStart = appended;
    }
    appended += n;
    pending.addComponent(true, data);
    memory.add(n);
    if (pending.readableBytes() >= flushThreshold) flushPending();
  }

  private void flushPending() {
    CompositeByteBuf buf = pending;
    pending = newBuffer();
    long position = flushAssigned;
    flushAssigned += buf.readableBytes();
    flushesInFlight++;
    disk.flusher().submit(() -> write(buf, position));
  }

  private void write(CompositeByteBuf buf, long position) {
    int n = buf.readableBytes();
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
      memory.release(n);
      synchronized (this) {
        flushesInFlight--;
        finishCommitIfDone();
      }
    }
  }

  private synchronized FileChannel channel() throws IOException {
    if (channel == null) {
      if (destroyed) throw new IOException(name + " was deleted");
      Files.createDirectories(file.getParentFile().toPath());
      channel = FileChannel.open(file.toPath(), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    }
    return channel;
  }

  /** Flushes what is left and completes once every byte is on disk. Calling it again returns the same result. */
  public synchronized CompletableFuture<CommittedFile> commit() {
    if (commit != null) return commit;
    commit = new CompletableFuture<>();
    if (pending.readableBytes() > 0) flushPending();
    finishCommitIfDone();
    return commit;
  }

  private void finishCommitIfDone() {
    if (commit == null || commit.isDone() || flushesInFlight > 0) return;
    if (error != null) {
      commit.completeExceptionally(new EstuaryException(name + " failed to write " + file + ": " + error, error));
      return;
    }
    try {
      if (channel != null) channel.close();
    } catch (IOException e) {
      commit.completeExceptionally(new EstuaryException(name + " failed to close " + file + ": " + e, e));
      return;
    }
    long[] offsets = new long[chunkOffsets.size()];
    for (int i = 0; i < offsets.length; i++) offsets[i] = chunkOffsets.get(i);
    commit.complete(new CommittedFile(file, offsets, appended));
  }

  /** Drops buffered data and deletes the file. */
  public synchronized void destroy() {
    if (destroyed) return;
    destroyed = true;
    memory.release(pending.readableBytes());
    pending.release();
    pending = newBuffer();
    try {
      if (channel != null) channel.close();
    } catch (IOException ignored) {
      // deleting anyway
    }
    if (!file.delete() && file.exists()) file.deleteOnExit();
  }

  @Override
  public String toString() {
    return name;
  }
}
