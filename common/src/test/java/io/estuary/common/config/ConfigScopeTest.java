package io.estuary.common.config;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.ConfigEntry.Scope;
import org.junit.jupiter.api.Test;

/** A key's scope (the docs section it is listed under) follows the class that declares it. */
class ConfigScopeTest {

    @Test
    void everyKeyHasTheScopeOfItsDeclaringClassUnlessItStatesOne() {
        for (ConfigEntry<?> e : ConfigRegistry.all()) {
            assertNotNull(e.scope(), e.key() + " has no scope: declared outside the *Config classes?");
            if (e.key().startsWith("estuary.client.")) assertEquals(Scope.CLIENT, e.scope(), e.key());
            if (e.key().startsWith("estuary.worker.")) assertEquals(Scope.SERVER, e.scope(), e.key());
        }
    }

    @Test
    void transportKeysThatTheDriversLifecycleServerReadsAreNotServerOnly() {
        // Listed under "Servers" before the scope came from the declaring class: a driver runs a TransportServer too.
        assertEquals(Scope.BOTH, NetworkConfig.MAX_CONNECTIONS.scope());
        assertEquals(Scope.BOTH, NetworkConfig.IDLE_TIMEOUT.scope());
        assertEquals(Scope.BOTH, NetworkConfig.BIND_WILDCARD.scope());
        // Stated explicitly: only a master or worker process reads these.
        assertEquals(Scope.SERVER, NetworkConfig.HALT_ON_FATAL_ERROR.scope());
        assertEquals(Scope.SERVER, NetworkConfig.VERSION_OVERRIDE.scope());
        assertEquals(Scope.BOTH, MasterConfig.ENDPOINTS.scope());
        assertEquals(Scope.SERVER, MasterConfig.PORT.scope());
    }
}
