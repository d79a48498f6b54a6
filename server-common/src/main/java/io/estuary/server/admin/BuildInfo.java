package io.estuary.server.admin;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.Gauge;

/**
 * The {@code estuary_build_info} gauge every server exports: always 1, labelled with the server kind and the version
 * it runs, so a dashboard counts nodes per version during a rolling upgrade. Stateless.
 */
public final class BuildInfo {
    public static final String NAME = "estuary_build_info";

    private BuildInfo() {}

    /** Registers the gauge in {@code registry} for a server of kind {@code server} ("master", "worker"). */
    public static void register(CollectorRegistry registry, String server, String version) {
        Gauge.build(
                        NAME,
                        "Always 1; its labels name the server kind and the version it runs "
                                + "(estuary.version.override or ESTUARY_VERSION when set).")
                .labelNames("server", "version")
                .register(registry)
                .labels(server, version)
                .set(1);
    }
}
