package io.estuary.server;

import io.estuary.network.testing.LayeringRules;
import org.junit.jupiter.api.Test;

/** The server-common module keeps the layering rules (no package cycle, no forbidden import): see {@link LayeringRules}. */
class LayeringTest {
    @Test
    void productionCodeKeepsTheLayeringRules() {
        LayeringRules.check(LayeringRules.Module.SERVER_COMMON);
    }
}
