package io.estuary.common.config;

import io.estuary.common.release.Release;
import io.estuary.common.release.Releases;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Configuration keys a release renamed or removed. A configuration written for the previous release keeps working
 * through an upgrade: such a key is still accepted during the release that renamed or removed it (and its patch
 * releases), with a WARN naming its replacement; a renamed key's value is read as its replacement's unless that is
 * set too. From the release after, the key is refused with a message naming its replacement. Keys that no release
 * ever had are refused always ({@link EstuaryConf#set}). Shown in docs/configuration.md. The same table serves
 * servers, {@code spark.estuary.*} and MapReduce job keys (they all go through {@link EstuaryConf}).
 *
 * <p>Immutable apart from the set of keys already warned about (once per key and process); thread-safe.
 */
public final class DeprecatedKeys {
    private static final Logger LOG = LoggerFactory.getLogger(DeprecatedKeys.class);

    /**
     * Every key renamed or removed, oldest first. Add a line when a release renames ({@code renamed(old, new,
     * release)}) or removes ({@code removed(old, release)}) a key; never delete one (the message for a key used
     * too late names its replacement).
     */
    private static final List<Entry> TABLE = Collections.unmodifiableList(Arrays.<Entry>asList());

    /** The table this code applies, as the release in the making. */
    public static final DeprecatedKeys CURRENT = new DeprecatedKeys(TABLE, Releases.NEXT);

    private final List<Entry> entries;
    private final Release current;
    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    /** A table applied as release {@code current} (tests play other releases and tables with it). */
    public DeprecatedKeys(List<Entry> entries, Release current) {
        this.entries = Collections.unmodifiableList(new ArrayList<>(entries));
        this.current = current;
    }

    /** One renamed or removed key. Immutable. */
    public static final class Entry {
        final String key;
        final String replacement;
        final Release since;

        private Entry(String key, String replacement, Release since) {
            this.key = key;
            this.replacement = replacement;
            this.since = since;
        }

        /** {@code key} became {@code replacement} in release {@code since}. */
        public static Entry renamed(String key, String replacement, Release since) {
            return new Entry(key, replacement, since);
        }

        /** {@code key} was removed in release {@code since}; its value is ignored while accepted. */
        public static Entry removed(String key, Release since) {
            return new Entry(key, null, since);
        }

        public String key() {
            return key;
        }

        /** The key that replaces it, or null when removed. */
        public String replacement() {
            return replacement;
        }

        public Release since() {
            return since;
        }

        /** The last release line ("0.2.x") that accepts it. */
        public String acceptedThrough() {
            return since.line() + ".x";
        }
    }

    public List<Entry> entries() {
        return entries;
    }

    /** The entry for {@code key}, or null when it was never renamed or removed. */
    public Entry find(String key) {
        for (Entry e : entries) if (e.key.equals(key)) return e;
        return null;
    }

    /**
     * What {@code key} (written as {@code asWritten}, e.g. with Spark's prefix) is read as: its replacement, or null
     * when it was removed and its value is ignored. Warns once per key.
     *
     * @throws ConfigException when the key was renamed or removed before the previous release
     */
    String resolve(Entry e, String asWritten) {
        String shown = asWritten.substring(0, asWritten.length() - e.key.length());
        if (!current.line().equals(e.since.line())) {
            throw new ConfigException("configuration key " + asWritten + " was "
                    + (e.replacement == null ? "removed" : "renamed to " + shown + e.replacement) + " in release "
                    + e.since + " and is no longer accepted (the old name was read through " + e.acceptedThrough()
                    + "); see docs/configuration.md");
        }
        if (warned.add(asWritten)) {
            if (e.replacement == null) {
                LOG.warn(
                        "configuration key {} was removed in release {}; its value is ignored, and from the release "
                                + "after {} the key is refused: delete it",
                        asWritten,
                        e.since,
                        e.acceptedThrough());
            } else {
                LOG.warn(
                        "configuration key {} was renamed to {} in release {}; read as {}, and from the release after "
                                + "{} the old name is refused: rename it",
                        asWritten,
                        shown + e.replacement,
                        e.since,
                        shown + e.replacement,
                        e.acceptedThrough());
            }
        }
        return e.replacement;
    }
}
