package io.estuary.worker.fetch;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.worker.storage.CommittedFile;
import java.io.File;
import java.nio.file.Files;
import org.junit.jupiter.api.Test;

class StreamRegistryTest {
  @Test
  void streamsEndAfterTheLastChunkOrWhenIdleAndUnknownOnesAreRefused() throws Exception {
    File f = Files.createTempFile("part", ".data").toFile();
    Files.write(f.toPath(), new byte[300]);
    CommittedFile file = new CommittedFile(f, new long[] {0, 100, 200}, 300, null);
    StreamRegistry r = new StreamRegistry(1000);
    long a = r.open(file, null);
    long b = r.open(file, null);
    assertEquals(100, r.getChunk(a, 0).size());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> r.getChunk(a, 3));
    assertTrue(e.getMessage().contains("has 3 chunks"), e.getMessage());
    assertEquals(100, r.getChunk(a, 2).size());
    e = assertThrows(IllegalArgumentException.class, () -> r.getChunk(a, 1));
    assertTrue(e.getMessage().contains("unknown stream"), e.getMessage());
    // Stream b's reader went away after one chunk: it is dropped once idle.
    r.getChunk(b, 0);
    assertEquals(0, r.dropIdle(System.currentTimeMillis(), StreamRegistry.IDLE_MS));
    assertEquals(1, r.dropIdle(System.currentTimeMillis() + StreamRegistry.IDLE_MS + 1, StreamRegistry.IDLE_MS));
    assertEquals(0, r.openStreams());
    // A file deleted under an open stream fails that chunk alone, with the reason.
    long c = r.open(file, null);
    assertTrue(f.delete());
    StatusException gone = assertThrows(StatusException.class, () -> r.getChunk(c, 0));
    assertTrue(gone.getMessage().contains("cannot be read"), gone.getMessage());
    assertEquals(StatusCode.DISK_FAILED, gone.status());
  }
}
