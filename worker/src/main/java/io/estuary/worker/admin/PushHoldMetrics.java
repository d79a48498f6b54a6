package io.estuary.worker.admin;

import io.prometheus.client.Collector;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.CounterMetricFamily;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * {@code estuary_worker_push_held_seconds_total{user}}: how long this worker left push connections unread to hold
 * applications to the rate they are allowed (congestion control enforced, {@code estuary.worker.congestion.enforce}),
 * read at each scrape from the push handler's own count. Stateless.
 */
final class PushHoldMetrics {
    private PushHoldMetrics() {}

    static void register(CollectorRegistry registry, Supplier<Map<String, Double>> held) {
        new Collector() {
            @Override
            public List<MetricFamilySamples> collect() {
                CounterMetricFamily c = new CounterMetricFamily(
                        "estuary_worker_push_held_seconds_total",
                        "Seconds this worker left push connections unread to hold their applications to the rate "
                                + "they are allowed (estuary.worker.congestion.enforce), by the applications' user "
                                + "(_unknown: none known; _other: past 200 users; a name starting with _ gets one "
                                + "more _ in front). Always has user _all, their sum.",
                        Arrays.asList("user"));
                double all = 0;
                for (Map.Entry<String, Double> e : held.get().entrySet()) {
                    c.addMetric(Arrays.asList(e.getKey()), e.getValue());
                    all += e.getValue();
                }
                c.addMetric(Arrays.asList("_all"), all);
                List<MetricFamilySamples> out = new ArrayList<>();
                out.add(c);
                return out;
            }
        }.register(registry);
    }
}
