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

    public EstuaryConf() {}

    public EstuaryConf(Map<String, String> values) {
        values.forEach(this::set);
    }

    /** Sets a value by key. Unknown {@code estuary.*} keys are refused, so a typo never goes unnoticed. */
    public EstuaryConf set(String key, String value) {
        if (key.startsWith(PREFIX) && ConfigRegistry.get(key) == null) {
            throw new ConfigException("unknown configuration key: " + key + " (see docs/configuration.md)");
        }
        ConfigEntry<?> entry = ConfigRegistry.get(key);
        if (entry != null) {
            entry.parse(value); // validate now: a bad value is reported where it was set, not where it is first read
        }
        values.put(key, value);
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
        EstuaryConf c = new EstuaryConf();
        c.values.putAll(values);
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

    @Override
    public String toString() {
        return "EstuaryConf" + toMap();
    }
}
