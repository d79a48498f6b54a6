package io.estuary.worker.meta;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.util.EstuaryException;
import io.estuary.worker.storage.FileContents;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.rocksdb.FlushOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteOptions;

/**
 * The worker's durable record of committed partition files, in RocksDB under one directory. One entry per
 * committed location: key {@code <shuffleKey> NUL <partitionId> NUL <epoch>}, value a versioned binary
 * {@link CommittedFileRecord}: format 2 (this version's) adds what the file holds (batch and record counts, CRC32C)
 * to format 1's path, disk, length and chunk offsets; a format 1 record still loads, with its contents unknown.
 * Puts and deletes go through RocksDB's write-ahead log without fsync: they survive a crash of the process (the log
 * is in the OS page cache), and {@link #close()} flushes everything to disk.
 *
 * <p>The store records what was committed; it does not check files. Whoever loads it verifies each file (see
 * {@code WorkerRecovery}). Thread-safe: calls share a read lock, {@link #close()} takes the write lock, and a put or
 * delete after close is ignored (a commit finishing while the worker stops is then a crash leftover).
 */
public final class CommittedFileStore implements AutoCloseable {
    /** The format written. */
    private static final byte FORMAT = 2;
    /** The first format: no contents. Still read. */
    private static final byte FORMAT_1 = 1;

    private static final char SEP = '\u0000';

    static {
        RocksDB.loadLibrary();
    }

    private final File dir;
    private final Options options;
    private final WriteOptions writes;
    private final RocksDB db;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private boolean closed;

    /** Opens (creating if needed) the store in {@code dir}. Only one process may have it open. */
    /** The store in {@code estuary.worker.meta.dir}, or by default in {@code .estuary-meta} on the first disk. */
    public static CommittedFileStore open(EstuaryConf conf, File firstDisk) {
        String metaDir = conf.get(WorkerConfig.META_DIR);
        return new CommittedFileStore(
                metaDir.isEmpty() ? new File(firstDisk, ".estuary-meta") : new File(metaDir).getAbsoluteFile());
    }

    public CommittedFileStore(File dir) {
        this.dir = dir;
        if (!dir.isDirectory() && !dir.mkdirs()) throw new EstuaryException("cannot create metadata directory " + dir);
        this.options = new Options().setCreateIfMissing(true);
        this.writes = new WriteOptions();
        try {
            this.db = RocksDB.open(options, dir.getAbsolutePath());
        } catch (RocksDBException e) {
            writes.close();
            options.close();
            throw new EstuaryException("cannot open the worker metadata store in " + dir + ": " + e.getMessage(), e);
        }
    }

    public File dir() {
        return dir;
    }

    /** Records (or replaces) the committed file of one location. */
    public void put(CommittedFileRecord r) {
        lock.readLock().lock();
        try {
            if (!closed) db.put(writes, key(r.shuffleKey(), r.partitionId(), r.epoch()), encode(r));
        } catch (RocksDBException e) {
            throw new EstuaryException("cannot record " + r + " in " + dir + ": " + e.getMessage(), e);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Forgets every location of a shuffle. */
    public void deleteShuffle(String shuffleKey) {
        byte[] from = (shuffleKey + SEP).getBytes(StandardCharsets.UTF_8);
        byte[] to = (shuffleKey + (char) (SEP + 1)).getBytes(StandardCharsets.UTF_8);
        lock.readLock().lock();
        try {
            if (!closed) db.deleteRange(writes, from, to);
        } catch (RocksDBException e) {
            throw new EstuaryException("cannot forget shuffle " + shuffleKey + " in " + dir + ": " + e.getMessage(), e);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Every record, in key order. Records of a format this version does not read are skipped. */
    public List<CommittedFileRecord> loadAll() {
        List<CommittedFileRecord> out = new ArrayList<>();
        lock.readLock().lock();
        try (RocksIterator it = closed ? null : db.newIterator()) {
            if (it == null) throw new IllegalStateException("the metadata store in " + dir + " is closed");
            for (it.seekToFirst(); it.isValid(); it.next()) {
                CommittedFileRecord r = decode(new String(it.key(), StandardCharsets.UTF_8), it.value());
                if (r != null) out.add(r);
            }
        } finally {
            lock.readLock().unlock();
        }
        return out;
    }

    static byte[] key(String shuffleKey, int partitionId, int epoch) {
        return (shuffleKey + SEP + partitionId + SEP + epoch).getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] encode(CommittedFileRecord r) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + 8 * r.chunkOffsets().length);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(FORMAT);
            out.writeUTF(r.path());
            out.writeUTF(r.mountPoint());
            out.writeLong(r.length());
            out.writeInt(r.chunkOffsets().length);
            for (long o : r.chunkOffsets()) out.writeLong(o);
            out.writeLong(r.contents().batches());
            out.writeLong(r.contents().records());
            out.writeLong(r.contents().crc32c());
        } catch (IOException e) {
            throw new IllegalStateException(e); // in memory: cannot happen
        }
        return bytes.toByteArray();
    }

    private static CommittedFileRecord decode(String key, byte[] value) {
        String[] parts = key.split(String.valueOf(SEP), -1);
        if (parts.length != 3 || value.length == 0 || (value[0] != FORMAT && value[0] != FORMAT_1)) return null;
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(value))) {
            byte format = in.readByte();
            String path = in.readUTF();
            String mountPoint = in.readUTF();
            long length = in.readLong();
            long[] offsets = new long[in.readInt()];
            for (int i = 0; i < offsets.length; i++) offsets[i] = in.readLong();
            FileContents contents = format == FORMAT_1
                    ? FileContents.NONE
                    : new FileContents(in.readLong(), in.readLong(), in.readLong());
            return new CommittedFileRecord(
                    parts[0],
                    Integer.parseInt(parts[1]),
                    Integer.parseInt(parts[2]),
                    path,
                    mountPoint,
                    length,
                    offsets,
                    contents);
        } catch (IOException | RuntimeException e) {
            return null; // a damaged entry: its file is treated like a crash leftover
        }
    }

    /** Flushes memtables to disk and closes the store. */
    @Override
    public void close() {
        lock.writeLock().lock();
        try {
            if (closed) return;
            closed = true;
        } finally {
            lock.writeLock().unlock();
        }
        try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
            db.flush(flush);
        } catch (RocksDBException e) {
            // the write-ahead log still holds everything
        }
        db.close();
        writes.close();
        options.close();
    }
}
