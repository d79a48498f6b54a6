package io.estuary.common.config;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigCheckTest {
    @TempDir
    Path dir;

    private Path write(String text) throws Exception {
        Path f = Files.createTempFile(dir, "estuary", ".conf");
        Files.write(f, text.getBytes(StandardCharsets.UTF_8));
        return f;
    }

    @Test
    void aGoodFileHasNoProblems() throws Exception {
        Path f = write("# comment\n"
                + "estuary.master.endpoints   m0:9097,m1:9097,m2:9097\n"
                + "estuary.worker.storage.dirs /data/disk0,/data/disk1\n"
                + "estuary.worker.flush.bufferSize 256k\n"
                + "estuary.network.bindWildcard true\n");
        assertEquals(java.util.Collections.emptyList(), ConfigCheck.check(f, ConfigCheck.Role.WORKER));
        assertEquals(java.util.Collections.emptyList(), ConfigCheck.check(f, ConfigCheck.Role.MASTER));
    }

    @Test
    void unknownKeysAreRefusedInsideAndOutsideTheEstuaryPrefix() throws Exception {
        Path f = write("estuary.worker.storage.dirs /d\nestuary.worker.flushh.bufferSize 1m\nspark.executor.cores 2\n");
        List<String> problems = ConfigCheck.check(f, null);
        assertEquals(2, problems.size(), problems.toString());
        assertTrue(
                problems.get(0).contains("unknown configuration key: estuary.worker.flushh.bufferSize"),
                problems.get(0));
        assertTrue(problems.get(1).contains("unknown configuration key: spark.executor.cores"), problems.get(1));
    }

    @Test
    void malformedValuesRepeatedKeysAndMissingRequiredKeysAreEachReported() throws Exception {
        Path f = write("estuary.worker.rpc.port 70000\n"
                + "estuary.worker.flush.bufferSize 12q\n"
                + "estuary.master.ha.nodes m0=a:1,m1=b:1:2\n"
                + "estuary.worker.rpc.port 9098\n");
        List<String> problems = ConfigCheck.check(f, ConfigCheck.Role.WORKER);
        assertEquals(4, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("set more than once: estuary.worker.rpc.port"), problems.get(0));
        assertTrue(problems.get(1).contains("estuary.worker.flush.bufferSize"), problems.get(1));
        assertTrue(problems.get(2).contains("estuary.master.ha.nodes"), problems.get(2));
        assertTrue(problems.get(3).contains("estuary.worker.storage.dirs is required"), problems.get(3));
        // A master does not need a worker's storage directories.
        assertEquals(3, ConfigCheck.check(f, ConfigCheck.Role.MASTER).size());
    }
}
