package io.estuary.testing;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.ConfigEntry;
import io.estuary.common.config.ConfigRegistry;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import org.junit.jupiter.api.Test;

class TestConfsTest {
    /** Every port key the servers declare, found by name, so a new listener cannot be forgotten here. */
    @Test
    void everyDeclaredPortIsEphemeral() {
        ConfigRegistry.loadAll();
        EstuaryConf master = TestConfs.master();
        EstuaryConf worker = TestConfs.worker();
        int ports = 0;
        for (ConfigEntry<?> e : ConfigRegistry.all()) {
            if (!e.key().endsWith(".port")) continue;
            ports++;
            EstuaryConf c = e.key().startsWith("estuary.master.") ? master : worker;
            assertEquals(0, c.get(e), e.key() + " is not ephemeral in the test configuration");
        }
        assertTrue(ports >= 6, "found only " + ports + " port keys");
    }

    @Test
    void keepsPortsTheOverridesSet() {
        EstuaryConf c = TestConfs.worker(new EstuaryConf().set(WorkerConfig.RPC_PORT, "12345"));
        assertEquals(12345, c.get(WorkerConfig.RPC_PORT));
        assertEquals(0, c.get(WorkerConfig.HTTP_PORT));
    }
}
