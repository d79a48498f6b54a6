package org.apache.spark.shuffle.estuary;

import io.estuary.network.testing.LayeringRules;
import org.junit.jupiter.api.Test;

/**
 * The Spark 3 adapter keeps the layering rules (no package cycle, imports only common, network and client, no source
 * file over the size limit, shared Spark sources included): see {@link LayeringRules}.
 */
class LayeringTest {
    @Test
    void productionCodeKeepsTheLayeringRules() {
        LayeringRules.check(LayeringRules.Module.SPARK);
    }
}
