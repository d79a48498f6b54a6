package io.estuary.common.config;

import java.util.Objects;
import java.util.function.Function;

/**
 * One configuration key: its name, type, default and documentation, declared exactly once (in one of the
 * {@code *Config} classes of this package). Declaring an entry registers it, so the documentation table and the
 * unknown-key check always see every key.
 */
public final class ConfigEntry<T> {
    private final String key;
    private final ConfigType<T> type;
    private final String defaultText;
    private final String doc;
    private final Scope statedScope;
    private volatile Scope scope;

    /** Who reads a key: the servers, or the client that runs inside engine tasks and drivers. */
    public enum Scope {
        SERVER,
        CLIENT,
        BOTH
    }

    ConfigEntry(String key, ConfigType<T> type, String defaultText, String doc, Scope scope) {
        this.key = Objects.requireNonNull(key);
        this.type = Objects.requireNonNull(type);
        this.defaultText = defaultText;
        this.doc = Objects.requireNonNull(doc);
        this.statedScope = scope;
        this.scope = scope;
        if (defaultText != null) {
            type.parse(key, defaultText); // a bad default is a programming error: fail at class load
        }
        ConfigRegistry.register(this);
    }

    public String key() {
        return key;
    }

    public ConfigType<T> type() {
        return type;
    }
    /** The default as text, or null when the key has no default. */
    public String defaultText() {
        return defaultText;
    }

    public String doc() {
        return doc;
    }
    /** Who reads this key: as stated in its declaration, else the scope of the class that declares it. */
    public Scope scope() {
        if (scope == null) ConfigRegistry.loadAll();
        return scope;
    }

    /** Called once the declaring class is known (see {@link ConfigRegistry}). */
    void declaredIn(Scope classScope) {
        scope = statedScope != null ? statedScope : classScope;
    }

    T parse(String text) {
        return type.parse(key, text);
    }

    public static <T> Builder<T> builder(String key, ConfigType<T> type) {
        return new Builder<>(key, type);
    }

    /** Fluent declaration: {@code ConfigEntry.builder("estuary.x", ConfigType.INT).doc("...").defaultValue("3").build()}. */
    public static final class Builder<T> {
        private final String key;
        private final ConfigType<T> type;
        private String defaultText;
        private String doc = "";
        private Scope scope; // null: the declaring class's scope
        private Function<T, String> check;

        private Builder(String key, ConfigType<T> type) {
            this.key = key;
            this.type = type;
        }

        public Builder<T> doc(String doc) {
            this.doc = doc;
            return this;
        }

        public Builder<T> defaultValue(String text) {
            this.defaultText = text;
            return this;
        }
        /** States a scope other than the declaring class's (e.g. a server-only key among the transport keys). */
        public Builder<T> scope(Scope scope) {
            this.scope = scope;
            return this;
        }

        /** A check on the parsed value; it returns an error message, or null when the value is fine. */
        public Builder<T> check(Function<T, String> check) {
            this.check = check;
            return this;
        }

        public ConfigEntry<T> build() {
            ConfigType<T> t = check == null ? type : type.withCheck(check);
            return new ConfigEntry<>(key, t, defaultText, doc, scope);
        }
    }

    @Override
    public String toString() {
        return key;
    }
}
