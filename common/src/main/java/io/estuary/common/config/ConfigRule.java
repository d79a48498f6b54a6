package io.estuary.common.config;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * A rule between keys that no single key's check can state: a watermark below another, a soft limit not above its
 * hard one. Declared beside its keys in their {@code *Config} class; declaring a rule registers it, so
 * {@link ConfigCheck} checks every rule and the documentation lists them. Immutable; thread-safe.
 */
public final class ConfigRule {
    private final ConfigEntry<? extends Comparable<?>> lower;
    private final ConfigEntry<? extends Comparable<?>> upper;
    private final boolean strict;

    private <T extends Comparable<? super T>> ConfigRule(ConfigEntry<T> lower, ConfigEntry<T> upper, boolean strict) {
        this.lower = lower;
        this.upper = upper;
        this.strict = strict;
        ConfigRegistry.register(this);
    }

    /** {@code lower}'s value must be below {@code upper}'s. */
    public static <T extends Comparable<? super T>> ConfigRule below(ConfigEntry<T> lower, ConfigEntry<T> upper) {
        return new ConfigRule(lower, upper, true);
    }

    /** {@code lower}'s value must not be above {@code upper}'s. */
    public static <T extends Comparable<? super T>> ConfigRule atMost(ConfigEntry<T> lower, ConfigEntry<T> upper) {
        return new ConfigRule(lower, upper, false);
    }

    public List<ConfigEntry<?>> keys() {
        return Collections.unmodifiableList(Arrays.<ConfigEntry<?>>asList(lower, upper));
    }

    /** The rule in words, e.g. "estuary.a must be below estuary.b". */
    public String describe() {
        return describe("");
    }

    /** The rule in words, each key between {@code quote}s. */
    String describe(String quote) {
        return quote
                + lower.key()
                + quote
                + (strict ? " must be below " : " must not be above ")
                + quote
                + upper.key()
                + quote;
    }

    /** What is wrong with {@code conf} (its values, else the defaults) under this rule, or null when it holds. */
    public String check(EstuaryConf conf) {
        if (!hasValue(conf, lower) || !hasValue(conf, upper)) return null; // the required-key check reports it
        int c = compare(conf.get(lower), conf.get(upper));
        if (strict ? c < 0 : c <= 0) return null;
        return describe() + " (" + shown(conf, lower) + " vs " + shown(conf, upper) + ")";
    }

    private static String shown(EstuaryConf conf, ConfigEntry<?> entry) {
        return SecretKeys.shown(entry.key(), conf.toMap().getOrDefault(entry.key(), entry.defaultText()));
    }

    private static boolean hasValue(EstuaryConf conf, ConfigEntry<?> entry) {
        return conf.contains(entry) || entry.defaultText() != null;
    }

    @SuppressWarnings({"unchecked", "rawtypes"}) // both entries have the same T, by the factories' signatures
    private static int compare(Object a, Object b) {
        return ((Comparable) a).compareTo(b);
    }

    @Override
    public String toString() {
        return describe();
    }
}
