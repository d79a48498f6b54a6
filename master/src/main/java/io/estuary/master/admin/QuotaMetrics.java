package io.estuary.master.admin;

import io.estuary.server.admin.AdminViews;
import io.prometheus.client.Collector;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.Counter;
import io.prometheus.client.GaugeMetricFamily;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;

/**
 * Per user, tenant and the cluster: what each uses of its quota and the quota's limits (gauges read at scrape from
 * {@link QuotaAdmin#entries}), and the shuffles refused or told to wait, by the limit reached. Past {@link #MAX_SCOPES} scopes, the gauges leave the rest out and the refusals count them under {@code _other}; a name starting with {@code _} gets one more in front. Thread-safe.
 */
final class QuotaMetrics {
    /** Distinct scopes with series of their own. */
    static final int MAX_SCOPES = 200;

    private final Counter refusals;
    private final java.util.Set<String> named = java.util.concurrent.ConcurrentHashMap.newKeySet();

    QuotaMetrics(CollectorRegistry registry, Supplier<List<AdminViews.QuotaEntry>> entries) {
        refusals = Counter.build(
                        "estuary_master_quota_refusals_total",
                        "New shuffles not admitted under a quota, by scope (cluster, tenant, user), its name, the "
                                + "limit reached (bytes, files, shuffles, slots, pushRate) and the outcome: refused "
                                + "(QUOTA_EXCEEDED) or waiting (ADMISSION_WAIT, counted at each ask).")
                .labelNames("scope", "name", "limit", "outcome")
                .register(registry);
        // The cluster's series exist from the start, so a dashboard finds them on a cluster that refused nothing yet.
        for (String l : new String[] {"bytes", "files", "shuffles", "slots", "pushRate"}) {
            refusals.labels("cluster", "", l, "refused");
            refusals.labels("cluster", "", l, "waiting");
        }
        new Collector() {
            @Override
            public List<MetricFamilySamples> collect() {
                GaugeMetricFamily use = new GaugeMetricFamily(
                        "estuary_master_quota_use",
                        "What each scope's applications hold now, every copy counted: applications, shuffles, slots; "
                                + "and, on the leader only (the workers report to it), bytes, files and "
                                + "push_bytes_per_second. Scopes: the cluster, and each tenant and user with a quota "
                                + "set or a live application.",
                        Arrays.asList("scope", "name", "measure"));
                GaugeMetricFamily limit = new GaugeMetricFamily(
                        "estuary_master_quota_limit",
                        "Each scope's quota (the operators' or the configured default), by measure; 0: no limit.",
                        Arrays.asList("scope", "name", "measure"));
                java.util.Set<String> shown = new java.util.HashSet<>();
                for (AdminViews.QuotaEntry e : entries.get()) {
                    String name = label(e.name(), shown);
                    if (name == null) continue;
                    add(use, e, name, "applications", (long) e.applications());
                    add(use, e, name, "shuffles", e.shuffles());
                    add(use, e, name, "slots", e.slots());
                    add(use, e, name, "bytes", e.bytes());
                    add(use, e, name, "files", e.files());
                    add(use, e, name, "push_bytes_per_second", e.pushBytesPerSecond());
                    java.util.Map<String, Long> limits = new java.util.LinkedHashMap<>();
                    for (String m : MEASURES) limits.put(m, 0L);
                    for (String part :
                            e.quota().isEmpty() ? new String[0] : e.quota().split(",")) {
                        String[] kv = part.split("=", 2);
                        String measure = measureOf(kv[0]);
                        if (measure != null) limits.put(measure, Long.parseLong(kv[1]));
                    }
                    for (java.util.Map.Entry<String, Long> l : limits.entrySet()) {
                        add(limit, e, name, l.getKey(), l.getValue());
                    }
                }
                List<MetricFamilySamples> out = new ArrayList<>();
                out.add(use);
                out.add(limit);
                return out;
            }
        }.register(registry);
    }

    private static final String[] MEASURES = {"bytes", "files", "shuffles", "slots", "push_bytes_per_second"};

    /** The measure a quota part limits, as a label; null for parts that are policy, not limits. */
    private static String measureOf(String part) {
        switch (part) {
            case "bytes":
            case "files":
            case "shuffles":
            case "slots":
                return part;
            case "pushRate":
                return "push_bytes_per_second";
            default:
                return null;
        }
    }

    private static void add(GaugeMetricFamily g, AdminViews.QuotaEntry e, String name, String measure, Long v) {
        if (v != null) g.addMetric(Arrays.asList(e.scope(), name, measure), v);
    }

    /** The label of a scope's name at a scrape, or null once {@link #MAX_SCOPES} were shown (the rest are left out). */
    private static String label(String name, java.util.Set<String> shown) {
        if (!shown.contains(name) && shown.size() >= MAX_SCOPES) return null;
        shown.add(name);
        return name.startsWith("_") ? "_" + name : name;
    }

    /** Counts one shuffle refused or told to wait. */
    void refused(String scope, String name, String limit, boolean waiting) {
        String n = name.startsWith("_") ? "_" + name : name;
        if (!named.contains(n)) {
            if (named.size() >= MAX_SCOPES) n = "_other";
            else named.add(n);
        }
        refusals.labels(scope, n, limit, waiting ? "waiting" : "refused").inc();
    }

    long refusals(String scope, String name, String limit, boolean waiting) {
        return (long) refusals.labels(scope, name, limit, waiting ? "waiting" : "refused")
                .get();
    }
}
