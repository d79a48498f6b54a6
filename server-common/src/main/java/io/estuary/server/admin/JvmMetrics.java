package io.estuary.server.admin;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.hotspot.BufferPoolsExports;
import io.prometheus.client.hotspot.ClassLoadingExports;
import io.prometheus.client.hotspot.GarbageCollectorExports;
import io.prometheus.client.hotspot.MemoryPoolsExports;
import io.prometheus.client.hotspot.ThreadExports;

/**
 * The JVM's own metrics every server exports beside its estuary_* ones (Prometheus' hotspot collectors, named
 * jvm_*): garbage collections, heap and non-heap memory per pool, direct and mapped buffer pools (Netty's direct
 * memory shows there), threads by state, loaded classes. Each call registers new collectors, which read the JVM's
 * management beans at each scrape. Stateless.
 */
public final class JvmMetrics {
    private JvmMetrics() {}

    public static void register(CollectorRegistry registry) {
        new GarbageCollectorExports().register(registry);
        new MemoryPoolsExports().register(registry);
        new BufferPoolsExports().register(registry);
        new ThreadExports().register(registry);
        new ClassLoadingExports().register(registry);
    }
}
