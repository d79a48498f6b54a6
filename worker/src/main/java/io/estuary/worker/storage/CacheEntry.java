package io.estuary.worker.storage;

import io.netty.buffer.ByteBuf;
import java.util.concurrent.CompletableFuture;

/**
 * One partition in the {@link PartitionCache}: its bytes, its shuffle and, for a copy held in place of its file
 * (until written), how it reaches its disk. Not thread-safe: the cache reads and changes it under its lock. The cache owns
 * {@code data} and releases it when the entry goes; a claimed write-back's slice is released by that write.
 */
final class CacheEntry {
    /** Writes a held copy's bytes to its file. */
    interface WriteBack {
        /**
         * Starts writing {@code data} (a slice the callee releases when done); the future completes when the bytes are
         * on disk, or exceptionally. Must not block.
         */
        CompletableFuture<Void> start(ByteBuf data);
    }

    final String shuffleKey;
    final ByteBuf data;
    /** How a held copy reaches its disk; null once it is there (or for a file read from disk). */
    WriteBack writeBack;
    /** Whether the cache dropped this entry (evicted, its shuffle removed, closed). */
    boolean removed;
    /** A held copy's write to disk, once claimed. */
    CompletableFuture<Void> written;
    /** The slice a claimed write-back writes, retained under the cache's lock (the entry may go before it starts). */
    private ByteBuf claimed;

    CacheEntry(String shuffleKey, ByteBuf data, WriteBack writeBack) {
        this.shuffleKey = shuffleKey;
        this.data = data;
        this.writeBack = writeBack;
    }

    /** Claims a held copy's write to disk: true the first time only (the caller then starts it). */
    boolean claimWriteBack() {
        if (written != null) return false;
        written = new CompletableFuture<>();
        claimed = data.retainedSlice();
        return true;
    }

    /** The slice of the write-back claimed last (the claiming thread's, once): the write releases it. */
    ByteBuf takeClaimed() {
        ByteBuf b = claimed;
        claimed = null;
        return b;
    }

    /** Whether this is a committed copy whose bytes are not on disk yet (only here). */
    boolean held() {
        return writeBack != null;
    }
}
