package org.apache.spark.shuffle.estuary;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/** Estuary's codec follows Spark's shuffle compression settings unless the application chose one for Estuary. */
class SparkConfBridgeTest {
    private static EstuaryConf estuary(String... sparkKeysAndValues) {
        SparkConf conf = new SparkConf(false);
        for (int i = 0; i < sparkKeysAndValues.length; i += 2)
            conf.set(sparkKeysAndValues[i], sparkKeysAndValues[i + 1]);
        return SparkConfBridge.toEstuaryConf(conf);
    }

    @Test
    void lz4UnlessSparkSaysOtherwise() {
        assertEquals("lz4", estuary().get(ClientConfig.COMPRESSION_CODEC));
        assertEquals("lz4", estuary("spark.io.compression.codec", "snappy").get(ClientConfig.COMPRESSION_CODEC));
    }

    @Test
    void sparkShuffleCompressFalseMeansNone() {
        assertEquals("none", estuary("spark.shuffle.compress", "false").get(ClientConfig.COMPRESSION_CODEC));
        assertEquals(
                "none",
                estuary("spark.shuffle.compress", "false", "spark.io.compression.codec", "zstd")
                        .get(ClientConfig.COMPRESSION_CODEC));
    }

    @Test
    void sparkZstdMeansZstdAtSparksLevel() {
        EstuaryConf c = estuary("spark.io.compression.codec", "zstd", "spark.io.compression.zstd.level", "4");
        assertEquals("zstd", c.get(ClientConfig.COMPRESSION_CODEC));
        assertEquals(4, c.get(ClientConfig.COMPRESSION_ZSTD_LEVEL));
        assertEquals(
                "zstd",
                estuary("spark.io.compression.codec", "org.apache.spark.io.ZStdCompressionCodec")
                        .get(ClientConfig.COMPRESSION_CODEC));
        assertEquals(1, estuary("spark.io.compression.codec", "zstd").get(ClientConfig.COMPRESSION_ZSTD_LEVEL));
    }

    @Test
    void sparksZstdLevelCountsForAnExplicitZstdToo() {
        EstuaryConf c =
                estuary("spark.estuary.client.compression.codec", "zstd", "spark.io.compression.zstd.level", "5");
        assertEquals(5, c.get(ClientConfig.COMPRESSION_ZSTD_LEVEL));
        c = estuary(
                "spark.estuary.client.compression.zstd.level", "2",
                "spark.io.compression.codec", "zstd",
                "spark.io.compression.zstd.level", "5");
        assertEquals(2, c.get(ClientConfig.COMPRESSION_ZSTD_LEVEL));
    }

    @Test
    void estuarysOwnSettingWins() {
        EstuaryConf c = estuary(
                "spark.estuary.client.compression.codec", "lz4",
                "spark.shuffle.compress", "false",
                "spark.io.compression.codec", "zstd");
        assertEquals("lz4", c.get(ClientConfig.COMPRESSION_CODEC));
    }
}
