package io.estuary.common.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/** How the text of a configuration value becomes a typed value, with a precise error when it cannot. */
public final class ConfigType<T> {
    private final String name;
    private final Function<String, T> parser;
    private final Function<T, String> check;

    private ConfigType(String name, Function<String, T> parser, Function<T, String> check) {
        this.name = name;
        this.parser = parser;
        this.check = check;
    }

    public String name() {
        return name;
    }

    ConfigType<T> withCheck(Function<T, String> extra) {
        Function<T, String> first = check;
        return new ConfigType<>(name, parser, v -> {
            String err = first == null ? null : first.apply(v);
            return err != null ? err : extra.apply(v);
        });
    }

    /**
     * The typed value of {@code text}, or a {@link ConfigException} naming {@code key} (whatever the text is a value
     * of: a configuration key, or one part of a value such as a quota's "bytes") and why it is not one.
     */
    public T parse(String key, String text) {
        T value;
        try {
            value = parser.apply(text.trim());
        } catch (RuntimeException e) {
            throw new ConfigException(key + ": '" + SecretKeys.shown(key, text) + "' is not a valid " + name
                    + (e.getMessage() == null || SecretKeys.isSecret(key) ? "" : " (" + e.getMessage() + ")"));
        }
        String err = check == null ? null : check.apply(value);
        if (err != null) {
            throw new ConfigException(key + ": '" + SecretKeys.shown(key, text) + "' " + err);
        }
        return value;
    }

    public static final ConfigType<String> STRING = new ConfigType<>("string", s -> s, null);

    public static final ConfigType<Integer> INT = new ConfigType<>("int", Integer::parseInt, null);

    public static final ConfigType<Long> LONG = new ConfigType<>("long", Long::parseLong, null);

    public static final ConfigType<Double> DOUBLE = new ConfigType<>("double", Double::parseDouble, null);

    public static final ConfigType<Boolean> BOOLEAN = new ConfigType<>(
            "boolean",
            s -> {
                String v = s.toLowerCase(Locale.ROOT);
                if (v.equals("true")) return true;
                if (v.equals("false")) return false;
                throw new IllegalArgumentException("expected true or false");
            },
            null);

    /** A size in bytes: a number with an optional unit b, k, m, g, t (powers of 1024), e.g. 64k, 8m. */
    public static final ConfigType<Long> BYTES = new ConfigType<>("byte size", ConfigType::parseBytes, null);

    /** A duration, returned in milliseconds: a number with unit ms, s, min, h or d, e.g. 200ms, 30s. */
    public static final ConfigType<Long> DURATION_MS = new ConfigType<>("duration", ConfigType::parseDurationMs, null);

    /** A comma-separated list; blanks are dropped. */
    public static final ConfigType<List<String>> LIST = new ConfigType<>("list", ConfigType::parseList, null);

    static long parseBytes(String s) {
        String v = s.toLowerCase(Locale.ROOT).replace(" ", "");
        if (v.endsWith("ib")) v = v.substring(0, v.length() - 2);
        else if (v.endsWith("b")) v = v.substring(0, v.length() - 1);
        long mult = 1;
        char last = v.isEmpty() ? ' ' : v.charAt(v.length() - 1);
        switch (last) {
            case 'k':
                mult = 1L << 10;
                break;
            case 'm':
                mult = 1L << 20;
                break;
            case 'g':
                mult = 1L << 30;
                break;
            case 't':
                mult = 1L << 40;
                break;
            default:
                break;
        }
        if (mult != 1) v = v.substring(0, v.length() - 1);
        if (v.isEmpty()) throw new IllegalArgumentException("examples: 1048576, 64k, 8m, 2g");
        long n;
        try {
            n = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("examples: 1048576, 64k, 8m, 2g");
        }
        if (n < 0) throw new IllegalArgumentException("must not be negative");
        return Math.multiplyExact(n, mult);
    }

    static long parseDurationMs(String s) {
        String v = s.toLowerCase(Locale.ROOT).replace(" ", "");
        String[][] units = {{"ms", "1"}, {"min", "60000"}, {"s", "1000"}, {"h", "3600000"}, {"d", "86400000"}};
        for (String[] u : units) {
            if (v.endsWith(u[0])) {
                String num = v.substring(0, v.length() - u[0].length());
                try {
                    long n = Long.parseLong(num);
                    if (n < 0) throw new IllegalArgumentException("must not be negative");
                    return Math.multiplyExact(n, Long.parseLong(u[1]));
                } catch (NumberFormatException e) {
                    break;
                }
            }
        }
        throw new IllegalArgumentException("a number with a unit: ms, s, min, h or d, e.g. 200ms, 30s");
    }

    static List<String> parseList(String s) {
        List<String> out = new ArrayList<>();
        for (String part : s.split(",")) {
            String p = part.trim();
            if (!p.isEmpty()) out.add(p);
        }
        return Collections.unmodifiableList(out);
    }

    /** Checks shared by many declarations. */
    public static <N extends Number> Function<N, String> positive() {
        return n -> n.doubleValue() > 0 ? null : "must be greater than 0";
    }

    public static <N extends Number> Function<N, String> nonNegative() {
        return n -> n.doubleValue() >= 0 ? null : "must be 0 or more";
    }

    /** A share: above 0, at most 1. */
    public static Function<Double, String> ratio() {
        return d -> d > 0 && d <= 1 ? null : "must be above 0 and at most 1";
    }

    public static Function<Integer, String> port() {
        return p -> p >= 0 && p <= 65535 ? null : "is not a port (0 to 65535; 0 picks a free one)";
    }

    public static Function<String, String> oneOf(String... choices) {
        return v -> {
            for (String c : choices) if (c.equalsIgnoreCase(v)) return null;
            return "must be one of " + String.join(", ", choices);
        };
    }
}
