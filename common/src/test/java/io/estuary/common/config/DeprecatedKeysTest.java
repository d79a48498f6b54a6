package io.estuary.common.config;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.release.Release;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Renamed and removed keys across releases, on a table of the kind a later release would hold. */
class DeprecatedKeysTest {
    static final String NEW = WorkerConfig.FLUSH_BUFFER_SIZE.key();
    static final String OLD = "estuary.worker.flushBufferBytes";
    static final String GONE = "estuary.worker.legacyKnob";
    static final String ANCIENT = "estuary.worker.ancientName";
    static final Release R2 = new Release("0.2.0", null);

    static DeprecatedKeys table(Release current) {
        return new DeprecatedKeys(
                Arrays.asList(
                        DeprecatedKeys.Entry.renamed(ANCIENT, NEW, new Release("0.1.0", null)),
                        DeprecatedKeys.Entry.renamed(OLD, NEW, R2),
                        DeprecatedKeys.Entry.removed(GONE, R2)),
                current);
    }

    @Test
    void aKeyRenamedInThisReleaseIsReadAsItsReplacement() {
        EstuaryConf conf = new EstuaryConf(table(R2)).set(OLD, "256k");
        assertEquals(256 * 1024L, conf.get(WorkerConfig.FLUSH_BUFFER_SIZE));
        assertFalse(conf.toMap().containsKey(OLD));
        // patch releases of the line accept it too
        assertEquals(
                256 * 1024L,
                new EstuaryConf(table(new Release("0.2.3", null)))
                        .set(OLD, "256k")
                        .get(WorkerConfig.FLUSH_BUFFER_SIZE));
    }

    @Test
    void theNewNameWinsWhicheverComesFirst() {
        assertEquals(
                8 * 1024L,
                new EstuaryConf(table(R2)).set(OLD, "256k").set(NEW, "8k").get(WorkerConfig.FLUSH_BUFFER_SIZE));
        EstuaryConf c = new EstuaryConf(table(R2)).set(NEW, "8k").set(OLD, "256k");
        assertEquals(8 * 1024L, c.get(WorkerConfig.FLUSH_BUFFER_SIZE));
        assertEquals(8 * 1024L, c.copy().set(OLD, "16k").get(WorkerConfig.FLUSH_BUFFER_SIZE), "a copy remembers");
    }

    @Test
    void aRemovedKeyIsAcceptedAndIgnored() {
        EstuaryConf conf = new EstuaryConf(table(R2)).set(GONE, "anything");
        assertTrue(conf.toMap().isEmpty(), conf.toString());
    }

    @Test
    void aKeyRenamedBeforeThePreviousReleaseIsRefusedNamingItsReplacement() {
        ConfigException e = assertThrows(ConfigException.class, () -> new EstuaryConf(table(R2)).set(ANCIENT, "8k"));
        assertTrue(e.getMessage().contains(ANCIENT) && e.getMessage().contains("renamed to " + NEW), e.getMessage());
        ConfigException later = assertThrows(
                ConfigException.class, () -> new EstuaryConf(table(new Release("0.3.0", null))).set(GONE, "x"));
        assertTrue(later.getMessage().contains("removed in release 0.2.0"), later.getMessage());
    }

    @Test
    void keysNoReleaseHadAreRefusedAndBadValuesNameTheKey() {
        ConfigException e =
                assertThrows(ConfigException.class, () -> new EstuaryConf(table(R2)).set("estuary.worker.typo", "1"));
        assertTrue(e.getMessage().contains("unknown configuration key: estuary.worker.typo"), e.getMessage());
        assertThrows(ConfigException.class, () -> new EstuaryConf(table(R2)).set(OLD, "not-a-size"));
    }

    @Test
    void messagesNameTheKeyAsItsUserWroteIt() {
        ConfigException e = assertThrows(
                ConfigException.class, () -> new EstuaryConf(table(R2)).set(ANCIENT, "8k", "spark." + ANCIENT));
        assertTrue(
                e.getMessage().contains("spark." + ANCIENT) && e.getMessage().contains("renamed to spark." + NEW),
                e.getMessage());
    }

    @Test
    void theTableOfThisReleaseNamesOnlyDeclaredReplacementsAndNoDeclaredKey() {
        for (DeprecatedKeys.Entry e : DeprecatedKeys.CURRENT.entries()) {
            assertNull(ConfigRegistry.get(e.key()), e.key() + " is declared and deprecated at once");
            if (e.replacement() != null) assertNotNull(ConfigRegistry.get(e.replacement()), e.replacement());
        }
    }
}
