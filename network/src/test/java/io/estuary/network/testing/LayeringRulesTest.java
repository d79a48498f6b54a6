package io.estuary.network.testing;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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

    @Test
    void aSourceFileOverTheLimitIsNamedWithItsLengthAndOneAtTheLimitPasses(@TempDir Path root) throws IOException {
        Path pkg = Files.createDirectories(root.resolve("io/estuary/x"));
        write(pkg.resolve("AtLimit.java"), 400);
        write(pkg.resolve("Over.java"), 401);
        write(pkg.resolve("MuchOver.java"), 520);
        write(pkg.resolve("notes.txt"), 900); // only Java sources count

        List<String> over = LayeringRules.oversizedSources(root, LayeringRules.MAX_CLASS_LINES);

        assertEquals(
                Arrays.asList(
                        root.resolve("io/estuary/x/MuchOver.java") + ": 520 lines",
                        root.resolve("io/estuary/x/Over.java") + ": 401 lines"),
                over);
    }

    @Test
    void theSparkAdapterAlsoChecksTheSourcesEverySparkLineShares() {
        assertEquals(
                Arrays.asList(Paths.get("src", "main", "java"), Paths.get("..", "common-src")),
                LayeringRules.sourceRoots(LayeringRules.Module.SPARK));
        assertEquals(
                Collections.singletonList(Paths.get("src", "main", "java")),
                LayeringRules.sourceRoots(LayeringRules.Module.CLIENT));
    }

    @Test
    void noSourceDirectoryMeansNothingOversized(@TempDir Path root) {
        assertTrue(LayeringRules.oversizedSources(root.resolve("absent"), 400).isEmpty());
    }

    private static void write(Path file, int lines) throws IOException {
        List<String> text = new ArrayList<>();
        for (int i = 0; i < lines; i++) text.add("// line " + i);
        Files.write(file, text, StandardCharsets.UTF_8);
    }
}
