package io.estuary.common.release;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * Every release, oldest first, and the one this code will become. {@code CHANGELOG.md} names the same versions and
 * commits (a test checks). The compatibility window is one release: the servers and clients of {@link #NEXT} work
 * with those of the newest released one in every combination a rolling upgrade creates (docs/upgrading.md).
 * Constants only; safe from any thread.
 */
public final class Releases {
    private Releases() {}

    /** The first release: main at this commit (its poms said 0.1.0-SNAPSHOT). */
    public static final Release V0_1_0 = new Release("0.1.0", "c7c3e3d825cb1667a629527fc5e7c20d498dc916");

    /** The release in the making (no commit yet): what this code is. */
    public static final Release NEXT = new Release("0.2.0", null);

    private static final List<Release> RELEASED = Collections.unmodifiableList(Arrays.asList(V0_1_0));

    /** Every release made, oldest first. */
    public static List<Release> released() {
        return RELEASED;
    }

    /** The newest release made: the oldest this code must still work with. */
    public static Release previous() {
        return RELEASED.get(RELEASED.size() - 1);
    }

    /** A release by version, or null when none was made under it. */
    public static Release byVersion(String version) {
        if (NEXT.version().equals(version)) return NEXT;
        for (Release r : RELEASED) if (r.version().equals(version)) return r;
        return null;
    }
}
