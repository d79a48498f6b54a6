package io.estuary.testing.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class PrometheusTextTest {
    private static final String SCRAPE = String.join(
            "\n",
            "# HELP estuary_master_is_leader 1 when this master leads.",
            "# TYPE estuary_master_is_leader gauge",
            "estuary_master_is_leader 1.0",
            "# TYPE estuary_master_workers gauge",
            "estuary_master_workers{state=\"available\"} 2.0",
            "estuary_master_workers{state=\"excluded\"} 1.0",
            "estuary_master_workers_total 7.0",
            "estuary_build_info{server=\"master\",version=\"0.1.0-{x}\"} 1.0",
            "");

    @Test
    void sumsEveryLabelSetOfTheNamedMetricOnly() {
        assertEquals(1.0, PrometheusText.sum(SCRAPE, "estuary_master_is_leader"));
        assertEquals(3.0, PrometheusText.sum(SCRAPE, "estuary_master_workers"), "a longer name is another metric");
        assertEquals(7.0, PrometheusText.sum(SCRAPE, "estuary_master_workers_total"));
        assertEquals(1.0, PrometheusText.sum(SCRAPE, "estuary_build_info"), "a brace inside a quoted label value");
    }

    @Test
    void absentMetricIsMinusOne() {
        assertEquals(-1, PrometheusText.sum(SCRAPE, "estuary_master_term"));
        assertEquals(-1, PrometheusText.sum("", "estuary_master_is_leader"));
    }

    @Test
    void unterminatedLabelsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> PrometheusText.sum("m{a=\"b\" 1", "m"));
    }
}
