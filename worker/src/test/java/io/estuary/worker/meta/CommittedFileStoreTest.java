package io.estuary.worker.meta;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.worker.storage.FileContents;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

/**
 * The RocksDB metadata store: what is written (contents included) is what a reopened store loads; a shuffle is
 * forgotten exactly; a record of the first format (no contents) still loads, its contents unknown.
 */
class CommittedFileStoreTest {
    @TempDir
    Path dir;

    private static CommittedFileRecord record(String key, int partition, int epoch, long length, long... offsets) {
        return new CommittedFileRecord(
                key,
                partition,
                epoch,
                "/d/" + key + "/" + partition + "-" + epoch + ".data",
                "/d",
                length,
                offsets,
                new FileContents(partition + 10, partition * 100L + length, (length * 2654435761L) & 0xffffffffL));
    }

    @Test
    void writeReopenLoadDelete() throws Exception {
        Path meta = dir.resolve("meta");
        CommittedFileRecord a0 = record("app-1", 0, 0, 3000, 0, 1000, 2000);
        CommittedFileRecord a1 = record("app-1", 1, 2, 0);
        CommittedFileRecord b0 = record("app-10", 0, 0, 42, 0); // "app-1" is a prefix of its key
        CommittedFileRecord c7 = record("other-app-3", 7, 1, 1L << 40, 0, 1L << 39);
        try (CommittedFileStore s = new CommittedFileStore(meta.toFile())) {
            s.put(a0);
            s.put(record("app-1", 1, 2, 99, 0)); // replaced below
            s.put(a1);
            s.put(b0);
            s.put(c7);
        }
        assertTrue(Files.isDirectory(meta));
        try (CommittedFileStore s = new CommittedFileStore(meta.toFile())) {
            assertEquals(new HashSet<>(Arrays.asList(a0, a1, b0, c7)), new HashSet<>(s.loadAll()));
            s.deleteShuffle("app-1");
        }
        try (CommittedFileStore s = new CommittedFileStore(meta.toFile())) {
            assertEquals(new HashSet<>(Arrays.asList(b0, c7)), new HashSet<>(s.loadAll()));
            s.deleteShuffle("app-10");
            s.deleteShuffle("never-there-5");
            assertEquals(Arrays.asList(c7), s.loadAll());
            assertArrayEquals(new long[] {0, 1L << 39}, s.loadAll().get(0).chunkOffsets());
            assertEquals(
                    new FileContents(17, 700 + (1L << 40), ((1L << 40) * 2654435761L) & 0xffffffffL),
                    s.loadAll().get(0).contents());
        }
    }

    @Test
    void unknownContentsRoundTrip() {
        CommittedFileRecord r = new CommittedFileRecord(
                "app-2",
                3,
                0,
                "/d/x.data",
                "/d",
                10,
                new long[] {0},
                new FileContents(FileContents.UNKNOWN, FileContents.UNKNOWN, 0xffffffffL));
        try (CommittedFileStore s = new CommittedFileStore(dir.resolve("u").toFile())) {
            s.put(r);
        }
        try (CommittedFileStore s = new CommittedFileStore(dir.resolve("u").toFile())) {
            assertEquals(Arrays.asList(r), s.loadAll());
        }
    }

    /** A store written by a worker of the first format (path, disk, length, chunk offsets; no contents). */
    @Test
    void aRecordOfTheFirstFormatLoadsWithUnknownContents() throws Exception {
        Path meta = dir.resolve("v1");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(1);
            out.writeUTF("/d/app-1/0/5-1.data");
            out.writeUTF("/d");
            out.writeLong(3000);
            out.writeInt(2);
            out.writeLong(0);
            out.writeLong(2000);
        }
        RocksDB.loadLibrary();
        try (Options o = new Options().setCreateIfMissing(true);
                RocksDB db = RocksDB.open(o, meta.toString())) {
            db.put(CommittedFileStore.key("app-1", 5, 1), bytes.toByteArray());
            db.put(CommittedFileStore.key("app-1", 6, 0), new byte[] {9, 1, 2}); // a format this version does not know
        }
        try (CommittedFileStore s = new CommittedFileStore(meta.toFile())) {
            assertEquals(
                    Arrays.asList(new CommittedFileRecord(
                            "app-1", 5, 1, "/d/app-1/0/5-1.data", "/d", 3000, new long[] {0, 2000}, FileContents.NONE)),
                    s.loadAll());
        }
    }

    @Test
    void writesAfterCloseAreIgnored() {
        CommittedFileStore s = new CommittedFileStore(dir.resolve("m").toFile());
        s.close();
        s.put(record("app-1", 0, 0, 1, 0));
        s.deleteShuffle("app-1");
        s.close();
    }
}
