package io.estuary.client.engine;

import java.util.Map;
import java.util.function.Function;

/**
 * A read-only key/value view of an engine's configuration (SparkConf, a Hadoop job configuration, a plain map), so
 * {@link EngineConf} reads each engine the same way. Implementations are only read from the caller's thread.
 */
public interface EngineSettings {
    /** Every key set. */
    Iterable<String> keys();

    /** The value of {@code key} as the engine resolves it, or null when it is not set. */
    String get(String key);

    static EngineSettings of(Iterable<String> keys, Function<String, String> get) {
        return new EngineSettings() {
            @Override
            public Iterable<String> keys() {
                return keys;
            }

            @Override
            public String get(String key) {
                return get.apply(key);
            }
        };
    }

    static EngineSettings of(Map<String, String> map) {
        return of(map.keySet(), map::get);
    }
}
