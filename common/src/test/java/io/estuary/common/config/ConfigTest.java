package io.estuary.common.config;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;

class ConfigTest {

    @Test
    void docsTableMatchesTheDeclarations() throws Exception {
        Path doc = Paths.get("..", "docs", "configuration.md");
        assertTrue(Files.exists(doc), "docs/configuration.md is missing: run build/gen-config-docs.sh");
        String onDisk = new String(Files.readAllBytes(doc), StandardCharsets.UTF_8);
        assertEquals(
                ConfigDocGenerator.render(),
                onDisk,
                "docs/configuration.md is out of date with the ConfigEntry declarations: run build/gen-config-docs.sh");
    }

    @Test
    void typedValuesParse() {
        EstuaryConf conf = new EstuaryConf()
                .set(WorkerConfig.FLUSH_BUFFER_SIZE, "256k")
                .set(NetworkConfig.RPC_TIMEOUT, "2min")
                .set(MasterConfig.ENDPOINTS, "a:1, b:2");
        assertEquals(256 * 1024L, conf.get(WorkerConfig.FLUSH_BUFFER_SIZE));
        assertEquals(120_000L, conf.get(NetworkConfig.RPC_TIMEOUT));
        assertEquals(java.util.Arrays.asList("a:1", "b:2"), conf.get(MasterConfig.ENDPOINTS));
        assertEquals(8L << 20, conf.get(WorkerConfig.CHUNK_SIZE), "default applies when unset");
        assertEquals(1L << 20, ConfigType.parseBytes("1mb"));
        assertEquals(100L, ConfigType.parseBytes("100b"));
    }

    @Test
    void badValuesAreRefusedWithTheKeyInTheMessage() {
        EstuaryConf conf = new EstuaryConf();
        ConfigException e = assertThrows(ConfigException.class, () -> conf.set(WorkerConfig.FLUSH_BUFFER_SIZE, "12q"));
        assertTrue(e.getMessage().contains("estuary.worker.flush.bufferSize"), e.getMessage());
        assertTrue(e.getMessage().contains("byte size"), e.getMessage());

        e = assertThrows(ConfigException.class, () -> conf.set(WorkerConfig.RPC_PORT, "70000"));
        assertTrue(e.getMessage().contains("not a port"), e.getMessage());

        e = assertThrows(ConfigException.class, () -> conf.set(MasterConfig.ENDPOINTS, "hostonly"));
        assertTrue(e.getMessage().contains("not host:port"), e.getMessage());

        e = assertThrows(ConfigException.class, () -> conf.set("estuary.worker.flushh.bufferSize", "1m"));
        assertTrue(e.getMessage().contains("unknown configuration key"), e.getMessage());

        e = assertThrows(ConfigException.class, () -> conf.get(WorkerConfig.STORAGE_DIRS));
        assertTrue(e.getMessage().contains("required"), e.getMessage());

        // A positive fraction is positive (the check once truncated it to 0).
        assertEquals(
                0.5,
                conf.set(MasterConfig.REGISTRATION_RATE_PER_HOST, "0.5").get(MasterConfig.REGISTRATION_RATE_PER_HOST));
        e = assertThrows(ConfigException.class, () -> conf.set(MasterConfig.REGISTRATION_RATE_PER_HOST, "0"));
        assertTrue(e.getMessage().contains("greater than 0"), e.getMessage());
    }

    @Test
    void nonEstuaryKeysPassThrough() {
        EstuaryConf conf = new EstuaryConf().set("some.other.key", "x");
        assertEquals("x", conf.toMap().get("some.other.key"));
    }
}
