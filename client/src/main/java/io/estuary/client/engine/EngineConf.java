package io.estuary.client.engine;

import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import java.util.function.Supplier;

/**
 * Estuary's client configuration taken from an engine's own settings: every key {@code <enginePrefix>estuary.*} is
 * read as {@code estuary.*} (Spark's prefix is {@code spark.}, MapReduce job configurations use none). An unknown
 * {@code estuary.*} key fails, as it does for the servers. Stateless: static functions only, safe from any thread.
 */
public final class EngineConf {
    private EngineConf() {}

    /**
     * @param defaultUser the user workers throttle heavy pushers by ({@link ClientConfig#USER}) when the engine's
     *     settings do not name one: the engine's own notion of the user; called only then
     */
    public static EstuaryConf fromEngineKeys(
            EngineSettings settings, String enginePrefix, Supplier<String> defaultUser) {
        return fromEngineKeys(settings, enginePrefix, defaultUser, new EstuaryConf());
    }

    /**
     * As {@link #fromEngineKeys(EngineSettings, String, Supplier)}, into {@code conf}. A key renamed in this release
     * is accepted under its old name with a WARN that names both as the engine spells them ({@code DeprecatedKeys}).
     */
    public static EstuaryConf fromEngineKeys(
            EngineSettings settings, String enginePrefix, Supplier<String> defaultUser, EstuaryConf conf) {
        String prefix = enginePrefix + EstuaryConf.PREFIX;
        for (String key : settings.keys()) {
            if (key.startsWith(prefix)) conf.set(key.substring(enginePrefix.length()), settings.get(key), key);
        }
        if (!conf.contains(ClientConfig.USER)) { // set under its own name or, once renamed, under its old one
            conf.set(ClientConfig.USER.key(), defaultUser.get());
        }
        return conf;
    }
}
