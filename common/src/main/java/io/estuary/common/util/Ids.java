package io.estuary.common.util;

import java.nio.charset.StandardCharsets;

/**
 * What an identifier a peer sends may look like. An application id becomes a directory name on every worker disk
 * and the first part of every shuffle key ({@link ShuffleKey}), which masters and workers split again: so it must be
 * non-empty, at most {@link #MAX_APP_ID_BYTES} bytes of UTF-8 (a file name's limit on common file systems), and free
 * of path separators, control characters and the names {@code .} and {@code ..}. Names that are only shown or
 * compared (users, hosts, worker endpoints) must be free of control characters, which would forge log lines.
 *
 * <p>Each check returns what is wrong as a sentence naming the field, or null when the value is fine. Stateless.
 */
public final class Ids {
    private Ids() {}

    /** Longest application id, in UTF-8 bytes: one path component. */
    public static final int MAX_APP_ID_BYTES = 255;

    /** What is wrong with an application id, or null. */
    public static String appIdProblem(String field, String id) {
        if (id.isEmpty()) return field + " is empty: an application id is required";
        int bytes = id.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_APP_ID_BYTES) {
            return field + " is " + bytes + " bytes long, more than an application id may be (" + MAX_APP_ID_BYTES
                    + ")";
        }
        if (id.equals(".") || id.equals(".."))
            return field + " is '" + id + "', which names a directory, not an application";
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (c == '/' || c == '\\') return field + " contains a path separator ('" + c + "') at index " + i;
            if (Character.isISOControl(c))
                return field + " contains a control character (" + code(c) + ") at index " + i;
        }
        return null;
    }

    /** What is wrong with a shuffle key ({@code <appId>-<shuffleId>}, shuffle id not negative), or null. */
    public static String shuffleKeyProblem(String field, String key) {
        int dash = key.lastIndexOf('-');
        if (dash < 0) return field + " '" + printable(key) + "' is not a shuffle key (<application id>-<shuffle id>)";
        String app = appIdProblem(field + "'s application id", key.substring(0, dash));
        if (app != null) return app;
        String id = key.substring(dash + 1);
        if (id.isEmpty() || id.length() > 10 || !id.chars().allMatch(Character::isDigit)) {
            return field + " '" + printable(key) + "' does not end in a shuffle id (a number of at most 10 digits)";
        }
        if (Long.parseLong(id) > Integer.MAX_VALUE)
            return field + " '" + printable(key) + "' has a shuffle id past 2^31";
        return null;
    }

    /** What is wrong with a shuffle id that names a shuffle of an application (master, worker), or null. */
    public static String shuffleIdProblem(String field, long shuffleId) {
        return shuffleId < 0 ? field + " is " + shuffleId + ": a shuffle id is never negative" : null;
    }

    /** What is wrong with a name that is only shown or compared (user, host, worker endpoint), or null. */
    public static String nameProblem(String field, String name) {
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (Character.isISOControl(c))
                return field + " contains a control character (" + code(c) + ") at index " + i;
        }
        return null;
    }

    private static String code(char c) {
        return String.format("U+%04X", (int) c);
    }

    /** The value with control characters escaped, for a message. */
    private static String printable(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length() && i < 100; i++) {
            char c = s.charAt(i);
            b.append(Character.isISOControl(c) ? code(c) : String.valueOf(c));
        }
        return s.length() > 100 ? b.append("...").toString() : b.toString();
    }
}
