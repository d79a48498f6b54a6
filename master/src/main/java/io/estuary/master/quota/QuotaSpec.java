package io.estuary.master.quota;

import io.estuary.common.config.ConfigException;
import io.estuary.common.config.ConfigType;
import io.estuary.master.protocol.Quota;
import io.estuary.master.protocol.QuotaScope;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A quota written as text, the way operators give it in the configuration ({@code estuary.master.quota.*}), to the
 * admin API and to {@code estuary quota set}: comma- or space-separated {@code name=value} parts, e.g.
 * {@code bytes=10g,shuffles=20,policy=wait,maxWait=5min}. Parts:
 * <ul>
 *   <li>{@code bytes}, {@code files}, {@code shuffles}, {@code slots}, {@code pushRate} (bytes per second): the
 *       limits; 0 or absent is none;
 *   <li>{@code policy=refuse|wait} and {@code maxWait}: what a shuffle over the quota does (refused at once, or waits
 *       for room up to maxWait, default 10min);
 *   <li>{@code overBytes=warn|stop}: what happens to running applications over the bytes limit.
 * </ul>
 * Errors name the part and what it should be. Stateless.
 */
public final class QuotaSpec {
    private QuotaSpec() {}

    /** The wait of {@code policy=wait} without a {@code maxWait}. */
    static final long DEFAULT_MAX_WAIT_MS = 10 * 60_000L;

    /**
     * The quota {@code text} describes, for {@code scope} and {@code name}. Empty text is a quota with no limit.
     *
     * @throws ConfigException naming {@code what} (the key or request it came in) and the part that is wrong
     */
    public static Quota parse(String what, QuotaScope scope, String name, String text) {
        Quota.Builder q = Quota.newBuilder().setScope(scope).setName(name);
        boolean maxWaitGiven = false;
        for (String part : text.trim().split("[,\\s]+")) {
            if (part.isEmpty()) continue;
            int eq = part.indexOf('=');
            if (eq <= 0 || eq == part.length() - 1) {
                throw new ConfigException(what + ": '" + part + "' is not name=value (" + PARTS + ")");
            }
            String key = part.substring(0, eq);
            String value = part.substring(eq + 1);
            String where = what + ": " + key;
            switch (key) {
                case "bytes":
                    q.setMaxBytes(ConfigType.BYTES.parse(where, value));
                    break;
                case "files":
                    q.setMaxFiles(count(where, value, Long.MAX_VALUE));
                    break;
                case "shuffles":
                    q.setMaxShuffles((int) count(where, value, Integer.MAX_VALUE));
                    break;
                case "slots":
                    q.setMaxSlots(count(where, value, Long.MAX_VALUE));
                    break;
                case "pushRate":
                    q.setMaxPushBytesPerSecond(ConfigType.BYTES.parse(where, value));
                    break;
                case "policy":
                    q.setWait(choice(where, value, "refuse", "wait").equals("wait"));
                    break;
                case "maxWait":
                    q.setMaxWaitMs(ConfigType.DURATION_MS.parse(where, value));
                    maxWaitGiven = true;
                    break;
                case "overBytes":
                    q.setStopLargest(choice(where, value, "warn", "stop").equals("stop"));
                    break;
                default:
                    throw new ConfigException(what + ": no quota part '" + key + "' (" + PARTS + ")");
            }
        }
        if (maxWaitGiven && !q.getWait()) {
            throw new ConfigException(what + ": maxWait is the wait of policy=wait; give policy=wait with it");
        }
        if (q.getWait() && !maxWaitGiven) q.setMaxWaitMs(DEFAULT_MAX_WAIT_MS);
        return q.build();
    }

    private static final String PARTS =
            "parts: bytes, files, shuffles, slots, pushRate, policy=refuse|wait, maxWait, overBytes=warn|stop";

    private static long count(String where, String value, long max) {
        long n = ConfigType.LONG.parse(where, value);
        if (n < 0 || n > max) throw new ConfigException(where + ": '" + value + "' must be 0 (no limit) to " + max);
        return n;
    }

    private static String choice(String where, String value, String... choices) {
        String v = value.toLowerCase(Locale.ROOT);
        for (String c : choices) if (c.equals(v)) return c;
        throw new ConfigException(where + ": '" + value + "' is none of " + String.join(", ", choices));
    }

    /** The quota as text that {@link #parse} reads back to the same limits and policy ("" when it limits nothing). */
    public static String describe(Quota q) {
        List<String> parts = new ArrayList<>();
        if (q.getMaxBytes() > 0) parts.add("bytes=" + q.getMaxBytes());
        if (q.getMaxFiles() > 0) parts.add("files=" + q.getMaxFiles());
        if (q.getMaxShuffles() > 0) parts.add("shuffles=" + q.getMaxShuffles());
        if (q.getMaxSlots() > 0) parts.add("slots=" + q.getMaxSlots());
        if (q.getMaxPushBytesPerSecond() > 0) parts.add("pushRate=" + q.getMaxPushBytesPerSecond());
        if (q.getWait()) {
            parts.add("policy=wait");
            parts.add("maxWait=" + q.getMaxWaitMs() + "ms");
        }
        if (q.getStopLargest()) parts.add("overBytes=stop");
        return String.join(",", parts);
    }

    /** Whether the quota limits anything (a quota without limits admits everything and is never exceeded). */
    public static boolean limitsAnything(Quota q) {
        return q.getMaxBytes() > 0
                || q.getMaxFiles() > 0
                || q.getMaxShuffles() > 0
                || q.getMaxSlots() > 0
                || q.getMaxPushBytesPerSecond() > 0;
    }

    /** "user alice", "tenant etl", "the cluster": how messages name a quota's scope. */
    public static String scopeName(QuotaScope scope, String name) {
        switch (scope) {
            case QUOTA_USER:
                return "user " + name;
            case QUOTA_TENANT:
                return "tenant " + name;
            default:
                return "the cluster";
        }
    }

    /** "user", "tenant" or "cluster": the scope as the admin API, the CLI and metrics name it. */
    public static String label(QuotaScope scope) {
        return scope == QuotaScope.QUOTA_USER ? "user" : scope == QuotaScope.QUOTA_TENANT ? "tenant" : "cluster";
    }

    /** The scope named in the admin API and the CLI: user, tenant or cluster. */
    public static QuotaScope scope(String what, String text) {
        switch (text == null ? "" : text.toLowerCase(Locale.ROOT)) {
            case "user":
                return QuotaScope.QUOTA_USER;
            case "tenant":
                return QuotaScope.QUOTA_TENANT;
            case "cluster":
                return QuotaScope.QUOTA_CLUSTER;
            default:
                throw new ConfigException(what + ": scope '" + text + "' is none of user, tenant, cluster");
        }
    }
}
