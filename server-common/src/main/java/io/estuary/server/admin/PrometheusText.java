package io.estuary.server.admin;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.exporter.common.TextFormat;
import java.io.IOException;
import java.io.StringWriter;

/** A registry's metrics in Prometheus' text exposition format (version 0.0.4). Stateless. */
public final class PrometheusText {
    private PrometheusText() {}

    public static final String CONTENT_TYPE = TextFormat.CONTENT_TYPE_004;

    /** Collects every metric of {@code registry} now (gauges read their sources on this thread). */
    public static String scrape(CollectorRegistry registry) {
        StringWriter w = new StringWriter();
        try {
            TextFormat.write004(w, registry.metricFamilySamples());
        } catch (IOException e) {
            throw new IllegalStateException(e); // a StringWriter does not fail
        }
        return w.toString();
    }
}
