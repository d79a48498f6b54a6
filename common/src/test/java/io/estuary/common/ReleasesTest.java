package io.estuary.common;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.release.Format;
import io.estuary.common.release.FormatsDoc;
import io.estuary.common.release.Release;
import io.estuary.common.release.Releases;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;

/** The release history in code agrees with the constants it describes, CHANGELOG.md and docs/upgrading.md. */
class ReleasesTest {
    private static String read(Path p) throws Exception {
        assertTrue(Files.exists(p), p + " is missing");
        return new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
    }

    @Test
    void theProtocolFormatIsTheProtocolVersion() {
        assertEquals(ProtocolVersion.CURRENT, Format.PROTOCOL.version());
        assertEquals(ProtocolVersion.OLDEST, Format.PROTOCOL.oldestRead());
    }

    @Test
    void theWindowReachesThePreviousRelease() {
        // A format whose oldest readable version is newer than the previous release's would break the window.
        for (Format f : Format.values()) {
            assertTrue(f.oldestRead() <= f.version(), f.name());
            assertTrue(f.lastChangedIn().compareTo(Releases.NEXT) <= 0, f.name());
            if (f.version() > f.oldestRead() || f.lastChangedIn().equals(Releases.NEXT)) continue;
            assertTrue(f.lastChangedIn().compareTo(Releases.previous()) <= 0, f.name());
        }
        assertTrue(Releases.previous().compareTo(Releases.NEXT) < 0);
        assertEquals(ProtocolVersion.OLDEST, 5, "release 0.1.0 spoke only protocol 5: the window must keep it");
    }

    @Test
    void theChangelogNamesEveryReleaseAndItsCommit() throws Exception {
        String log = read(Paths.get("..", "CHANGELOG.md"));
        for (Release r : Releases.released()) {
            assertTrue(r.commit().matches("[0-9a-f]{40}"), r.version());
            assertTrue(log.contains("## " + r.version() + " — commit " + r.commit()), "CHANGELOG.md lacks " + r);
        }
        assertTrue(log.contains("## " + Releases.NEXT.version()), "CHANGELOG.md lacks " + Releases.NEXT);
    }

    @Test
    void upgradingMdShowsTheGeneratedTable() throws Exception {
        String page = read(Paths.get("..", "docs", "upgrading.md"));
        assertEquals(
                FormatsDoc.update(page),
                page,
                "docs/upgrading.md is out of date with io.estuary.common.release: run build/gen-config-docs.sh");
    }

    @Test
    void versionsCompareAsNumbers() {
        assertTrue(new Release("0.10.0", null).compareTo(new Release("0.9.1", null)) > 0);
        assertSame(Releases.V0_1_0, Releases.byVersion("0.1.0"));
        assertNull(Releases.byVersion("9.9.9"));
        assertThrows(IllegalArgumentException.class, () -> new Release("1.0", null));
    }
}
