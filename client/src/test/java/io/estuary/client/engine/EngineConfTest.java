package io.estuary.client.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class EngineConfTest {
    private static final String MASTERS = "estuary.master.endpoints";

    @Test
    void sparkPrefixIsStrippedAndOtherKeysIgnored() {
        Map<String, String> spark = new HashMap<>();
        spark.put("spark." + MASTERS, "m1:9097,m2:9097");
        spark.put("spark." + ClientConfig.USER.key(), "alice");
        spark.put("spark.executor.memory", "4g");
        spark.put(MASTERS, "not-for-spark:1"); // without Spark's prefix: not Spark's setting of it
        EstuaryConf conf = EngineConf.fromEngineKeys(EngineSettings.of(spark), "spark.", () -> "never");
        assertEquals("m1:9097,m2:9097", conf.toMap().get(MASTERS));
        assertEquals("alice", conf.get(ClientConfig.USER));
        assertEquals(2, conf.toMap().size(), conf.toMap().toString());
    }

    @Test
    void emptyPrefixReadsKeysAsTheyAre() {
        Map<String, String> job = new HashMap<>();
        job.put(MASTERS, "m:9097");
        job.put("mapreduce.job.user.name", "bob");
        job.put("spark." + MASTERS, "ignored:1");
        EstuaryConf conf =
                EngineConf.fromEngineKeys(EngineSettings.of(job), "", () -> job.get("mapreduce.job.user.name"));
        assertEquals("m:9097", conf.toMap().get(MASTERS));
        assertEquals("bob", conf.get(ClientConfig.USER));
        assertEquals(2, conf.toMap().size(), conf.toMap().toString());
    }

    @Test
    void defaultUserOnlyAskedWhenNoneIsSet() {
        AtomicInteger asked = new AtomicInteger();
        Map<String, String> set = new HashMap<>();
        set.put("spark." + ClientConfig.USER.key(), "");
        EstuaryConf conf = EngineConf.fromEngineKeys(EngineSettings.of(set), "spark.", () -> {
            asked.incrementAndGet();
            return "engine-user";
        });
        assertEquals(0, asked.get(), "a user set (even empty) is the user");
        assertEquals("", conf.get(ClientConfig.USER));

        conf = EngineConf.fromEngineKeys(EngineSettings.of(new HashMap<>()), "spark.", () -> {
            asked.incrementAndGet();
            return "engine-user";
        });
        assertEquals(1, asked.get());
        assertEquals("engine-user", conf.get(ClientConfig.USER));
    }

    @Test
    void valuesComeFromTheEnginesLookup() {
        // Hadoop resolves ${var} in get(); the view's lookup is what counts, not a raw value.
        EngineSettings view = EngineSettings.of(
                java.util.Arrays.asList(MASTERS, "other"), k -> k.equals(MASTERS) ? "resolved:9097" : "x");
        EstuaryConf conf = EngineConf.fromEngineKeys(view, "", () -> "u");
        assertEquals("resolved:9097", conf.toMap().get(MASTERS));
    }

    @Test
    void unknownEstuaryKeyFails() {
        Map<String, String> spark = new HashMap<>();
        spark.put("spark.estuary.no.such.key", "1");
        assertThrows(
                RuntimeException.class, () -> EngineConf.fromEngineKeys(EngineSettings.of(spark), "spark.", () -> "u"));
    }

    @Test
    void aRenamedKeyIsAcceptedUnderItsOldEngineNameAndRefusedOnceTooOld() {
        String old = "estuary.masterEndpoints";
        io.estuary.common.release.Release r2 = new io.estuary.common.release.Release("0.2.0", null);
        io.estuary.common.config.DeprecatedKeys table = new io.estuary.common.config.DeprecatedKeys(
                java.util.Collections.singletonList(
                        io.estuary.common.config.DeprecatedKeys.Entry.renamed(old, MASTERS, r2)),
                r2);
        for (String prefix : new String[] {"spark.", ""}) { // Spark, and MapReduce job keys
            Map<String, String> set = new HashMap<>();
            set.put(prefix + old, "m:9097");
            EstuaryConf conf =
                    EngineConf.fromEngineKeys(EngineSettings.of(set), prefix, () -> "u", new EstuaryConf(table));
            assertEquals("m:9097", conf.toMap().get(MASTERS), prefix);
        }
        io.estuary.common.config.DeprecatedKeys later = new io.estuary.common.config.DeprecatedKeys(
                table.entries(), new io.estuary.common.release.Release("0.3.0", null));
        Map<String, String> set = new HashMap<>();
        set.put("spark." + old, "m:9097");
        io.estuary.common.config.ConfigException e = assertThrows(
                io.estuary.common.config.ConfigException.class,
                () -> EngineConf.fromEngineKeys(EngineSettings.of(set), "spark.", () -> "u", new EstuaryConf(later)));
        org.junit.jupiter.api.Assertions.assertTrue(
                e.getMessage().contains("spark." + old) && e.getMessage().contains("spark." + MASTERS), e.getMessage());
    }
}
