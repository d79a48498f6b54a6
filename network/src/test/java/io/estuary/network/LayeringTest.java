package io.estuary.network;

import io.estuary.network.testing.LayeringRules;
import org.junit.jupiter.api.Test;

/** The network module keeps the layering rules (no package cycle, no forbidden import): see {@link LayeringRules}. */
class LayeringTest {
    @Test
    void productionCodeKeepsTheLayeringRules() {
        LayeringRules.check(LayeringRules.Module.NETWORK);
    }
}
