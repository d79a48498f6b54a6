package io.estuary.common.util;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

/** The identifier rules, at and just past each bound. */
class IdsTest {
    @Test
    void applicationIds() {
        for (String ok : new String[] {
            "app-20261125-0001",
            "local-1700000000000",
            "application_1700_0001_1",
            "a..b",
            repeat("x", Ids.MAX_APP_ID_BYTES),
            "café"
        }) {
            assertNull(Ids.appIdProblem("app_id", ok), ok);
        }
        assertTrue(Ids.appIdProblem("app_id", "").contains("app_id is empty"));
        assertTrue(Ids.appIdProblem("app_id", repeat("x", Ids.MAX_APP_ID_BYTES + 1))
                .contains("256 bytes long"));
        assertTrue(Ids.appIdProblem("app_id", repeat("é", 128)).contains("256 bytes long"), "bytes, not characters");
        assertTrue(Ids.appIdProblem("app_id", "a/b").contains("path separator ('/') at index 1"));
        assertTrue(Ids.appIdProblem("app_id", "a\\b").contains("path separator"));
        assertTrue(Ids.appIdProblem("app_id", "..").contains("names a directory"));
        assertTrue(Ids.appIdProblem("app_id", ".").contains("names a directory"));
        assertTrue(Ids.appIdProblem("app_id", "a\u0000").contains("control character (U+0000) at index 1"));
        assertTrue(Ids.appIdProblem("app_id", "a\nb").contains("U+000A"));
    }

    @Test
    void shuffleKeysSplitIntoAValidApplicationAndShuffleId() {
        assertNull(Ids.shuffleKeyProblem("key", "app-1-0"));
        assertNull(Ids.shuffleKeyProblem("key", "app-" + Integer.MAX_VALUE));
        assertEquals("app-1", ShuffleKey.appId("app-1-0"));
        assertTrue(Ids.shuffleKeyProblem("key", "-0").contains("application id is empty"));
        assertTrue(Ids.shuffleKeyProblem("key", "app").contains("not a shuffle key"));
        assertTrue(Ids.shuffleKeyProblem("key", "app-").contains("does not end in a shuffle id"));
        assertNull(Ids.shuffleKeyProblem("key", "app--1"), "application 'app-', shuffle 1: splits as it was joined");
        assertTrue(Ids.shuffleKeyProblem("key", "app-2147483648").contains("past 2^31"));
        assertTrue(Ids.shuffleKeyProblem("key", "a/b-0").contains("path separator"));
        assertTrue(Ids.shuffleIdProblem("shuffle_id", -1).contains("never negative"));
        assertNull(Ids.shuffleIdProblem("shuffle_id", 0));
    }

    @Test
    void shownNamesMayHoldAnythingButControlCharacters() {
        assertNull(Ids.nameProblem("user", ""));
        assertNull(Ids.nameProblem("user", "DOMAIN\\alice/x"));
        assertTrue(Ids.nameProblem("user", "eve\r\n").contains("U+000D"));
    }

    private static String repeat(String s, int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) b.append(s);
        return b.toString();
    }
}
