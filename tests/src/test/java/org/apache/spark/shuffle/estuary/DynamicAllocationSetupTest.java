package org.apache.spark.shuffle.estuary;

import static org.junit.jupiter.api.Assertions.*;

import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/** What the driver's shuffle manager sets and refuses for dynamic allocation, on Spark with and without 3.5's API. */
class DynamicAllocationSetupTest {
    private static final String PLUGIN = EstuaryShuffleDataIO.class.getName();

    private static SparkConf dynamic() {
        return new SparkConf(false)
                .set("spark.master", "local-cluster[2,1,1024]")
                .set("spark.dynamicAllocation.enabled", "true");
    }

    @Test
    void thisSparkDeclaresReliableStorageThroughThePlugin() {
        assertTrue(DynamicAllocationSetup.sparkKnowsReliableStorage(), "built against Spark 3.5+");
        assertTrue(new EstuaryShuffleDataIO(new SparkConf(false)).driver().supportsReliableStorage());
        SparkConf conf = dynamic();
        DynamicAllocationSetup.prepare(conf);
        assertEquals(PLUGIN, conf.get(DynamicAllocationSetup.IO_PLUGIN));
        assertEquals("false", conf.get(DynamicAllocationSetup.TRACKING));
    }

    @Test
    void aPluginTheUserChoseIsKept() {
        SparkConf conf = dynamic().set(DynamicAllocationSetup.IO_PLUGIN, "com.example.MyIO");
        DynamicAllocationSetup.prepare(conf, true, true);
        assertEquals("com.example.MyIO", conf.get(DynamicAllocationSetup.IO_PLUGIN));
    }

    @Test
    void beforeSpark35DynamicAllocationUsesShuffleTracking() {
        SparkConf conf = dynamic();
        DynamicAllocationSetup.prepare(conf, false, true);
        assertEquals("true", conf.get(DynamicAllocationSetup.TRACKING));
        assertEquals("0s", conf.get(DynamicAllocationSetup.TRACKING_TIMEOUT));
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> DynamicAllocationSetup.prepare(
                        dynamic().set(DynamicAllocationSetup.TRACKING, "false"), false, true));
        assertTrue(e.getMessage().contains("spark.dynamicAllocation.shuffleTracking.enabled=true"), e.getMessage());
        DynamicAllocationSetup.prepare(
                dynamic().set("spark.dynamicAllocation.shuffleTracking.enabled", "true"), false, true);
        DynamicAllocationSetup.prepare(
                dynamic().set("spark.shuffle.service.enabled", "true").set(DynamicAllocationSetup.TRACKING, "false"),
                false,
                true);
        DynamicAllocationSetup.prepare(dynamic().set(DynamicAllocationSetup.TRACKING, "false"), false, false);
    }

    @Test
    void plainLocalModeIgnoresDynamicAllocationAsSparkDoes() {
        assertFalse(DynamicAllocationSetup.dynamicAllocationEnabled(dynamic().set("spark.master", "local[2]")));
        assertTrue(DynamicAllocationSetup.dynamicAllocationEnabled(dynamic()));
    }

    @Test
    void thePluginRefusesAnyOtherShuffleManager() {
        SparkConf sort = new SparkConf(false).set("spark.shuffle.manager", "sort");
        assertThrows(
                IllegalStateException.class,
                () -> new EstuaryShuffleDataIO(sort).driver().initializeApplication());
        assertThrows(
                IllegalStateException.class,
                () -> new EstuaryShuffleDataIO(sort).executor().createMapOutputWriter(0, 0, 1));
        SparkConf ours = new SparkConf(false).set("spark.shuffle.manager", EstuaryShuffleManager.class.getName());
        assertTrue(
                new EstuaryShuffleDataIO(ours).driver().initializeApplication().isEmpty());
    }
}
