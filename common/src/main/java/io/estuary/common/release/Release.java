package io.estuary.common.release;

import java.util.Objects;

/**
 * One release of Estuary: its version ({@code major.minor.patch}) and the commit it was built from. Git tags may not
 * travel with a copy of the repository; the commit ids here and in {@code CHANGELOG.md} do. Immutable.
 */
public final class Release implements Comparable<Release> {
    private final String version;
    private final String commit;
    private final int[] parts;

    public Release(String version, String commit) {
        this.version = Objects.requireNonNull(version);
        this.commit = commit;
        this.parts = parse(version);
    }

    public String version() {
        return version;
    }

    /** The full commit id, or null for the release in the making. */
    public String commit() {
        return commit;
    }

    /** Compares by version number. */
    @Override
    public int compareTo(Release o) {
        for (int i = 0; i < 3; i++) {
            int c = Integer.compare(parts[i], o.parts[i]);
            if (c != 0) return c;
        }
        return 0;
    }

    static int[] parse(String version) {
        String[] p = version.split("\\.", -1);
        if (p.length != 3) throw new IllegalArgumentException("a release version is major.minor.patch: " + version);
        int[] out = new int[3];
        for (int i = 0; i < 3; i++) out[i] = Integer.parseInt(p[i]);
        return out;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Release && ((Release) o).version.equals(version);
    }

    @Override
    public int hashCode() {
        return version.hashCode();
    }

    @Override
    public String toString() {
        return version;
    }
}
