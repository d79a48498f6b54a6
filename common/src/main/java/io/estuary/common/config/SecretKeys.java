package io.estuary.common.config;

import java.util.Locale;

/**
 * Which configuration values are never shown: every key whose name contains {@code secret}, {@code token} or
 * {@code password} (any case, any prefix, declared or not, e.g. {@code spark.estuary.auth.applicationSecret}). Every
 * place that renders configuration values (a conf's {@code toString}, a bad value's error, a broken rule's message)
 * shows {@link #REDACTED} instead. Stateless; safe from any thread.
 */
public final class SecretKeys {
    private SecretKeys() {}

    /** What a secret value is shown as. */
    public static final String REDACTED = "*****(redacted)";

    private static final String[] MARKERS = {"secret", "token", "password"};

    /** Whether {@code key}'s value must never be shown. */
    public static boolean isSecret(String key) {
        String k = key.toLowerCase(Locale.ROOT);
        for (String m : MARKERS) if (k.contains(m)) return true;
        return false;
    }

    /** {@code value}, or {@link #REDACTED} when {@code key} is a secret one. */
    public static String shown(String key, String value) {
        return value != null && isSecret(key) ? REDACTED : value;
    }
}
