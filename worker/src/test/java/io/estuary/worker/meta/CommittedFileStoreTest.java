package io.estuary.worker.meta;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The RocksDB metadata store: what is written is what a reopened store loads; a shuffle is forgotten exactly. */
class CommittedFileStoreTest {
  @TempDir
  Path dir;

  private static CommittedFileRecord record(String key, int partition, int epoch, long length, long... offsets) {
    return new CommittedFileRecord(key, partition, epoch, "/d/" + key + "/" + partition + "-" + epoch + ".data", "/d",
        length, offsets);
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
