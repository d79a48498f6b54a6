package io.estuary.common.config;

import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A set of configuration values, read through declared {@link ConfigEntry}s. Values are kept as text and parsed
 * on access, so one instance can be shipped around as plain strings (e.g. inside Spark's conf).
 */
public final class EstuaryConf {
    public static final String PREFIX = "estuary.";

    private final Map<String, String> values = new ConcurrentHashMap<>();
    /** Keys whose value came from a renamed key's old name: a value set under the new name replaces it. */
    private final java.util.Set<String> fromOldNames = ConcurrentHashMap.newKeySet();

    private final DeprecatedKeys deprecations;

    public EstuaryConf() {
        this(DeprecatedKeys.CURRENT);
    }

    /** A conf that applies {@code deprecations} to renamed and removed keys (tests play other releases with it). */
    public EstuaryConf(DeprecatedKeys deprecations) {
        this.deprecations = deprecations;
    }

    public EstuaryConf(Map<String, String> values) {
        this();
        values.forEach(this::set);
    }

    /**
     * Sets a value by key. Unknown {@code estuary.*} keys are refused, so a typo never goes unnoticed; a key a
     * release renamed or removed is accepted with a WARN while {@link DeprecatedKeys} says so.
     */
    public EstuaryConf set(String key, String value) {
        return set(key, value, key);
    }

    /**
     * As {@link #set(String, String)}, naming the key in messages as its user wrote it ({@code asWritten}, which ends
     * with {@code key}: e.g. {@code spark.estuary.…} for {@code estuary.…}).
     */
    public EstuaryConf set(String key, String value, String asWritten) {
        ConfigEntry<?> entry = ConfigRegistry.get(key);
        if (key.startsWith(PREFIX) && entry == null) {
            DeprecatedKeys.Entry old = deprecations.find(key);
            if (old == null) {
                throw new ConfigException("unknown configuration key: " + asWritten + " (see docs/configuration.md)");
            }
            String replacement = deprecations.resolve(old, asWritten);
            if (replacement == null) return this; // removed: accepted, ignored
            if (values.containsKey(replacement) && !fromOldNames.contains(replacement)) return this; // new name wins
            ConfigRegistry.get(replacement).parse(value);
            values.put(replacement, value);
            fromOldNames.add(replacement);
            return this;
        }
        if (entry != null) {
            entry.parse(value); // validate now: a bad value is reported where it was set, not where it is first read
        }
        values.put(key, value);
        fromOldNames.remove(key);
        return this;
    }

    public <T> EstuaryConf set(ConfigEntry<T> entry, String value) {
        return set(entry.key(), value);
    }

    public <T> T get(ConfigEntry<T> entry) {
        String text = values.get(entry.key());
        if (text == null) text = entry.defaultText();
        if (text == null) {
            throw new ConfigException(entry.key() + " is required but not set: " + entry.doc());
        }
        return entry.parse(text);
    }

    public boolean contains(ConfigEntry<?> entry) {
        return values.containsKey(entry.key());
    }

    public Map<String, String> toMap() {
        return Collections.unmodifiableMap(new TreeMap<>(values));
    }

    public EstuaryConf copy() {
        EstuaryConf c = new EstuaryConf(deprecations);
        c.values.putAll(values);
        c.fromOldNames.addAll(fromOldNames);
        return c;
    }

    /** Reads a {@code key value} or {@code key=value} file; {@code #} starts a comment. */
    public static EstuaryConf load(Path file) throws IOException {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        }
        EstuaryConf conf = new EstuaryConf();
        for (String key : p.stringPropertyNames()) {
            try {
                conf.set(key.trim(), p.getProperty(key).trim());
            } catch (ConfigException e) {
                throw new ConfigException(file + ": " + e.getMessage());
            }
        }
        return conf;
    }

    public static EstuaryConf load(InputStream in) throws IOException {
        Properties p = new Properties();
        p.load(in);
        EstuaryConf conf = new EstuaryConf();
        for (String key : p.stringPropertyNames())
            conf.set(key.trim(), p.getProperty(key).trim());
        return conf;
    }

    /**
     * A server's configuration: {@code $ESTUARY_CONF_DIR/estuary-defaults.conf} (default dir {@code conf}) when it
     * exists, then {@code -Destuary.*} system properties over it.
     */
    public static EstuaryConf forServer() throws IOException {
        String dir = System.getenv("ESTUARY_CONF_DIR") == null ? "conf" : System.getenv("ESTUARY_CONF_DIR");
        Path file = java.nio.file.Paths.get(dir, "estuary-defaults.conf");
        EstuaryConf conf = Files.exists(file) ? load(file) : new EstuaryConf();
        return conf.withSystemProperties();
    }

    /** Applies {@code -Destuary.*} JVM system properties over this conf (scripts pass overrides that way). */
    public EstuaryConf withSystemProperties() {
        for (String key : System.getProperties().stringPropertyNames()) {
            if (key.startsWith(PREFIX)) set(key, System.getProperty(key));
        }
        return this;
    }

    /** The values with every secret one ({@link SecretKeys}) redacted: safe to log or print. */
    public Map<String, String> toRedactedMap() {
        Map<String, String> out = new TreeMap<>();
        values.forEach((k, v) -> out.put(k, SecretKeys.shown(k, v)));
        return Collections.unmodifiableMap(out);
    }

    /** Redacts secret values ({@link SecretKeys}): a conf may end up in a log line or an exception. */
    @Override
    public String toString() {
        return "EstuaryConf" + toRedactedMap();
    }
}
