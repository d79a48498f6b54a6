package io.estuary.network.testing;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.util.Arrays;
import java.util.Collections;
import org.junit.jupiter.api.Test;

/** The rules catch what they promise to, on a fixture package built to break them (io.estuary.network.layeringfixture). */
class LayeringRulesTest {
    private static final String ROOT = "io.estuary.network.layeringfixture";
    private static final JavaClasses FIXTURE = new ClassFileImporter().importPackages(ROOT);

    @Test
    void aSubPackageThatImportsItsRootIsACycleAndAForbiddenImport() {
        AssertionError cycle = assertThrows(
                AssertionError.class,
                () -> LayeringRules.check(FIXTURE, Collections.singletonList(LayeringRules.freeOfPackageCycles(ROOT))));
        assertTrue(cycle.getMessage().contains("Cycle"), cycle.getMessage());
        assertTrue(cycle.getMessage().contains(ROOT + ".a"), cycle.getMessage());

        AssertionError up = assertThrows(
                AssertionError.class,
                () -> LayeringRules.check(
                        FIXTURE, Collections.singletonList(LayeringRules.subPackagesDoNotImportRoot(ROOT))));
        assertTrue(up.getMessage().contains("UsesRoot"), up.getMessage());
    }

    @Test
    void aForbiddenImportFailsAndTheOtherDirectionPasses() {
        AssertionError e = assertThrows(
                AssertionError.class,
                () -> LayeringRules.check(
                        FIXTURE,
                        Collections.singletonList(LayeringRules.doesNotImport(ROOT + ".a", ROOT + ".b", "test"))));
        assertTrue(e.getMessage().contains("Below"), e.getMessage());
        assertDoesNotThrow(() -> LayeringRules.check(
                FIXTURE, Collections.singletonList(LayeringRules.doesNotImport(ROOT + ".b", ROOT + ".a", "test"))));
    }

    @Test
    void everyBrokenRuleIsReportedNotOnlyTheFirst() {
        AssertionError e = assertThrows(
                AssertionError.class,
                () -> LayeringRules.check(
                        FIXTURE,
                        Arrays.asList(
                                LayeringRules.freeOfPackageCycles(ROOT),
                                LayeringRules.subPackagesDoNotImportRoot(ROOT))));
        assertTrue(e.getMessage().contains("Cycle") && e.getMessage().contains("UsesRoot"), e.getMessage());
    }

    @Test
    void aPackageTreeWithoutCyclesPasses() {
        assertDoesNotThrow(() -> LayeringRules.check(
                FIXTURE, Collections.singletonList(LayeringRules.freeOfPackageCycles(ROOT + ".b"))));
    }
}
