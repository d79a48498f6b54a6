package io.estuary.server.admin;

import io.prometheus.client.Collector;
import io.prometheus.client.CollectorRegistry;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Writes docs/metrics.md from live registries: per server kind a table of every metric family with the name a
 * scrape shows, its type, its labels and its help text. Labels are read from the samples, so a labelled metric
 * must have at least one child when the doc is generated (the metrics classes create their children up front).
 * Stateless.
 */
public final class MetricsDoc {
    private MetricsDoc() {}

    /** {@code sections}: a heading (e.g. "Master") and the registry of one running server of that kind. */
    public static String render(Map<String, CollectorRegistry> sections) {
        StringBuilder sb = new StringBuilder();
        sb.append("# Metrics\n\n")
                .append(
                        "Generated from the metric registries of a running master and worker by `build/gen-metrics-docs.sh`;\n")
                .append("a test fails when this file and the registries differ. Every server exports its metrics in\n")
                .append("Prometheus' text format at `GET /metrics` on its HTTP port (`estuary.master.http.port`,\n")
                .append(
                        "`estuary.worker.http.port`). Histograms are in seconds and export `_bucket`, `_sum` and `_count`.\n");
        for (Map.Entry<String, CollectorRegistry> s : sections.entrySet()) {
            sb.append("\n## ")
                    .append(s.getKey())
                    .append("\n\n")
                    .append("| Name | Type | Labels | Meaning |\n|---|---|---|---|\n");
            for (String[] row : rows(s.getValue())) {
                sb.append("| `")
                        .append(row[0])
                        .append("` | ")
                        .append(row[1])
                        .append(" | ")
                        .append(row[2])
                        .append(" | ")
                        .append(row[3].replace("|", "\\|"))
                        .append(" |\n");
            }
        }
        return sb.toString();
    }

    /** The names a scrape of {@code registry} shows for its families (counters with their {@code _total}). */
    public static List<String> names(CollectorRegistry registry) {
        List<String> out = new ArrayList<>();
        for (String[] row : rows(registry)) out.add(row[0]);
        return out;
    }

    private static List<String[]> rows(CollectorRegistry registry) {
        Map<String, String[]> byName = new LinkedHashMap<>();
        Enumeration<Collector.MetricFamilySamples> families = registry.metricFamilySamples();
        while (families.hasMoreElements()) {
            Collector.MetricFamilySamples f = families.nextElement();
            TreeSet<String> labels = new TreeSet<>();
            for (Collector.MetricFamilySamples.Sample sample : f.samples) labels.addAll(sample.labelNames);
            labels.remove("le");
            labels.remove("quantile");
            String name = f.type == Collector.Type.COUNTER && !f.name.endsWith("_total") ? f.name + "_total" : f.name;
            byName.put(name, new String[] {
                name,
                f.type.name().toLowerCase(java.util.Locale.ROOT),
                labels.isEmpty() ? "" : "`" + String.join("`, `", labels) + "`",
                f.help
            });
        }
        List<String> sorted = new ArrayList<>(byName.keySet());
        Collections.sort(sorted);
        List<String[]> out = new ArrayList<>();
        for (String n : sorted) out.add(byName.get(n));
        return out;
    }
}
