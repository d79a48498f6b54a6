package io.estuary.common.config;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigRuleTest {
    @TempDir
    Path dir;

    private List<String> check(String text) throws Exception {
        Path f = Files.createTempFile(dir, "estuary", ".conf");
        Files.write(f, ("estuary.worker.storage.dirs /d\n" + text).getBytes(StandardCharsets.UTF_8));
        return ConfigCheck.check(f, ConfigCheck.Role.WORKER);
    }

    @Test
    void theDefaultsKeepEveryRule() {
        EstuaryConf defaults = new EstuaryConf();
        assertFalse(ConfigRegistry.rules().isEmpty());
        for (ConfigRule rule : ConfigRegistry.rules()) assertNull(rule.check(defaults), rule.describe());
    }

    @Test
    void aResumeWatermarkAboveThePushPauseIsReportedWithBothKeysAndValues() throws Exception {
        List<String> problems = check("estuary.worker.memory.resumeRatio 0.9\n");
        assertEquals(
                Collections.singletonList("estuary.worker.memory.resumeRatio must be below "
                        + "estuary.worker.memory.pausePushRatio (0.9 vs 0.85)"),
                problems);
        // Equal is not below either: the worker would flap between paused and resumed.
        assertEquals(1, check("estuary.worker.memory.resumeRatio 0.85\n").size());
    }

    @Test
    void thePushPauseMayEqualButNotPassTheReplicationPause() throws Exception {
        assertEquals(Collections.emptyList(), check("estuary.worker.memory.pausePushRatio 0.95\n"));
        List<String> problems = check("estuary.worker.memory.pausePushRatio 0.97\n");
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(
                problems.get(0)
                        .startsWith("estuary.worker.memory.pausePushRatio must not be above "
                                + "estuary.worker.memory.pauseReplicateRatio"),
                problems.get(0));
    }

    @Test
    void minMaxPairsAcrossClassesAreChecked() throws Exception {
        List<String> problems = check("estuary.worker.split.softSize 3g\n"
                + "estuary.worker.commit.maxWait 3min\n"
                + "estuary.worker.disk.check.slowThreshold 6s\n"
                + "estuary.worker.cache.maxPartitionSize 512m\n");
        assertEquals(4, problems.size(), problems.toString());
        String all = problems.toString();
        assertTrue(all.contains("estuary.worker.split.softSize must not be above estuary.worker.split.hardSize"), all);
        assertTrue(
                all.contains("estuary.worker.commit.maxWait must be below estuary.network.rpc.timeout (3min vs 120s)"),
                all);
        assertTrue(
                all.contains("estuary.worker.disk.check.slowThreshold must be below estuary.worker.disk.check.timeout"),
                all);
        assertTrue(
                all.contains("estuary.worker.cache.maxPartitionSize must not be above estuary.worker.cache.maxBytes"),
                all);
    }

    @Test
    void aMalformedValueIsReportedOnceNotAgainAsABrokenRule() throws Exception {
        List<String> problems = check("estuary.worker.memory.resumeRatio lots\n");
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("estuary.worker.memory.resumeRatio"), problems.get(0));
    }
}
