package io.estuary.network.testing;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The layering rules of Estuary's production code, in one place (README "Layering rules" says why each exists).
 * Each module's {@code LayeringTest} calls {@link #check} with its {@link Module}, so {@code mvn verify} fails on a new
 * package cycle or a forbidden import. The rules read the module's compiled classes ({@code target/classes} under
 * the module, surefire's working directory), not its tests. common has no network test-jar on its class path and
 * states its two rules itself ({@code io.estuary.common.LayeringTest}); keep them in step with {@link Module#COMMON}.
 * The same check keeps every production class small: no source file under the module's {@code src/main/java} may
 * exceed {@link #MAX_CLASS_LINES} lines ({@link #oversizedSources}). Stateless.
 */
public final class LayeringRules {
    /** The most lines a production source file may have: a longer class has grown more than one job (issue 15). */
    public static final int MAX_CLASS_LINES = 400;

    private LayeringRules() {}

    /** A module: its root package and the other modules' root packages it may import. */
    public enum Module {
        COMMON("io.estuary.common"),
        NETWORK("io.estuary.network", "io.estuary.common"),
        SERVER_COMMON("io.estuary.server", "io.estuary.common", "io.estuary.network"),
        MASTER("io.estuary.master", "io.estuary.common", "io.estuary.network", "io.estuary.server"),
        WORKER("io.estuary.worker", "io.estuary.common", "io.estuary.network", "io.estuary.server"),
        CLI("io.estuary.cli", "io.estuary.common", "io.estuary.server"),
        CLIENT("io.estuary.client", "io.estuary.common", "io.estuary.network"),
        CLIENT_MR("io.estuary.mr", "io.estuary.common", "io.estuary.network", "io.estuary.client"),
        /**
         * The Spark 3 adapter (client-spark/spark-3): its root sits in Spark's namespace, outside io.estuary, because
         * it reaches Spark's package-private API. The rules hold as for any root: it imports only the listed Estuary
         * modules (other packages, Spark's included, are third-party code to them) and has no sub-packages yet.
         */
        SPARK("org.apache.spark.shuffle.estuary", "io.estuary.common", "io.estuary.network", "io.estuary.client");

        final String root;
        final List<String> mayImport;

        Module(String root, String... mayImport) {
            this.root = root;
            this.mayImport = Arrays.asList(mayImport);
        }
    }

    /** Every rule that {@code module}'s production classes must keep. */
    public static List<ArchRule> rulesFor(Module module) {
        List<ArchRule> rules = new ArrayList<>();
        rules.add(freeOfPackageCycles(module.root));
        rules.add(importsOnly(module));
        rules.add(subPackagesDoNotImportRoot(module.root, aboveRoot(module)));
        switch (module) {
            case NETWORK:
                rules.add(doesNotImport(
                        "io.estuary.network.server",
                        "io.estuary.network.client",
                        "a server answers requests; calling out is the client side's job, and the two ship apart"));
                break;
            case MASTER:
                rules.add(doesNotImport(
                        "io.estuary.master.state",
                        "io.estuary.network.rpc",
                        "the replicated state (log, state machine) knows nothing of how requests reach it"));
                break;
            case WORKER:
                rules.add(doesNotImport(
                        "io.estuary.worker.push",
                        "io.estuary.worker.fetch",
                        "the write path and the read path meet only in storage and partition"));
                rules.add(doesNotImport(
                        "io.estuary.worker.fetch",
                        "io.estuary.worker.push",
                        "the write path and the read path meet only in storage and partition"));
                break;
            case CLIENT:
                rules.add(noClasses()
                        .that()
                        .resideInAPackage("io.estuary.client..")
                        .and()
                        .resideOutsideOfPackage("io.estuary.client.engine..")
                        .should()
                        .dependOnClassesThat()
                        .resideInAPackage("io.estuary.client.engine..")
                        .because(
                                "the engine kit sits above the client's root: adapters use it, the client core never does")
                        .allowEmptyShould(true));
                rules.add(doesNotImport(
                        "io.estuary.client.write",
                        "io.estuary.client.read",
                        "writers and readers are separate engine ports; what both need lives below them"));
                rules.add(doesNotImport(
                        "io.estuary.client.read",
                        "io.estuary.client.write",
                        "writers and readers are separate engine ports; what both need lives below them"));
                break;
            default:
                break;
        }
        return rules;
    }

    /**
     * Fails, listing every violation of every rule, if {@code module}'s production classes break any rule or one of
     * its production source files ({@link #sourceRoots}) is longer than {@link #MAX_CLASS_LINES}.
     */
    public static void check(Module module) {
        StringBuilder failures = violations(productionClasses(), rulesFor(module));
        List<String> oversized = new ArrayList<>();
        for (Path root : sourceRoots(module)) oversized.addAll(oversizedSources(root, MAX_CLASS_LINES));
        if (!oversized.isEmpty()) {
            failures.append("Production classes over ")
                    .append(MAX_CLASS_LINES)
                    .append(" lines (split them along their seams into classes with one job each):\n  ")
                    .append(String.join("\n  ", oversized))
                    .append("\n\n");
        }
        if (failures.length() > 0) throw new AssertionError("Layering rules broken:\n" + failures);
    }

    static void check(JavaClasses classes, List<ArchRule> rules) {
        StringBuilder failures = violations(classes, rules);
        if (failures.length() > 0) throw new AssertionError("Layering rules broken:\n" + failures);
    }

    private static StringBuilder violations(JavaClasses classes, List<ArchRule> rules) {
        StringBuilder failures = new StringBuilder();
        for (ArchRule rule : rules) {
            EvaluationResult result = rule.evaluate(classes);
            if (result.hasViolation())
                failures.append(result.getFailureReport()).append("\n\n");
        }
        return failures;
    }

    /**
     * Every {@code .java} file under {@code sourceRoot} with more than {@code maxLines} lines, as "path: N lines"
     * (path relative to the module), longest first. A missing directory has none (surefire runs in the module).
     */
    public static List<String> oversizedSources(Path sourceRoot, int maxLines) {
        if (!Files.isDirectory(sourceRoot)) return new ArrayList<>();
        List<Map.Entry<Path, Long>> over = new ArrayList<>();
        try (Stream<Path> files = Files.walk(sourceRoot)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
                long lines;
                try (Stream<String> l = Files.lines(f, StandardCharsets.UTF_8)) {
                    lines = l.count();
                }
                if (lines > maxLines) over.add(new AbstractMap.SimpleEntry<>(f, lines));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the sources under " + sourceRoot.toAbsolutePath(), e);
        }
        over.sort(Map.Entry.<Path, Long>comparingByValue().reversed());
        List<String> out = new ArrayList<>();
        for (Map.Entry<Path, Long> e : over) out.add(e.getKey() + ": " + e.getValue() + " lines");
        return out;
    }

    /** The module's own compiled production classes (surefire runs in the module's directory). */
    public static JavaClasses productionClasses() {
        Path classes = Paths.get("target", "classes");
        if (!Files.isDirectory(classes)) {
            throw new IllegalStateException(
                    "no " + classes.toAbsolutePath() + ": run from the module directory after compile");
        }
        return new ClassFileImporter().importPath(classes);
    }

    /** No package under {@code root} (root included) depends, directly or through others, on itself. */
    public static ArchRule freeOfPackageCycles(String root) {
        return slices().assignedFrom(packagesUnder(root))
                .should()
                .beFreeOfCycles()
                .because("packages form layers: a cycle means no package can be understood, tested or moved alone");
    }

    /** The module imports only its own packages and the Estuary modules below it (third-party code is not limited). */
    public static ArchRule importsOnly(Module module) {
        List<String> allowed = new ArrayList<>();
        allowed.add(module.root + "..");
        for (String m : module.mayImport) allowed.add(m + "..");
        return noClasses()
                .that()
                .resideInAPackage(module.root + "..")
                .should()
                .dependOnClassesThat(
                        resideInAPackage("io.estuary..").and(not(resideInAnyPackage(allowed.toArray(new String[0])))))
                .because(
                        "modules are layers (common < network < server-common < master, worker; network < client < adapters): servers never see "
                                + "client code, clients never see server code");
    }

    /**
     * Sub-packages that sit above the module's root package rather than below it: they use the root's facade, and
     * nothing else in the module uses them. The client's engine kit is the one today: the adapters' shared parts.
     */
    static List<String> aboveRoot(Module module) {
        return module == Module.CLIENT ? Arrays.asList("io.estuary.client.engine") : new ArrayList<>();
    }

    /**
     * Where the module's production sources are, relative to the module directory: {@code src/main/java}, and for the
     * Spark adapter also the sources every Spark line shares ({@code client-spark/common-src}, added by the build).
     */
    static List<Path> sourceRoots(Module module) {
        List<Path> roots = new ArrayList<>();
        roots.add(Paths.get("src", "main", "java"));
        if (module == Module.SPARK) roots.add(Paths.get("..", "common-src"));
        return roots;
    }

    /** Sub-packages of {@code root} never import classes of the root package itself: the root composes them. */
    public static ArchRule subPackagesDoNotImportRoot(String root) {
        return subPackagesDoNotImportRoot(root, new ArrayList<>());
    }

    /** As {@link #subPackagesDoNotImportRoot(String)}, for every sub-package but those in {@code above} (and below). */
    public static ArchRule subPackagesDoNotImportRoot(String root, List<String> above) {
        return noClasses()
                .that(resideInASubPackageOf(root, above))
                .should()
                .dependOnClassesThat()
                .resideInAPackage(root)
                .because("the root package wires the sub-packages together; what they share belongs in a sub-package")
                .allowEmptyShould(true);
    }

    /** Classes in {@code from} (and below) never import classes in {@code to} (and below). */
    public static ArchRule doesNotImport(String from, String to, String why) {
        return noClasses()
                .that()
                .resideInAPackage(from + "..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage(to + "..")
                .because(why)
                .allowEmptyShould(true);
    }

    private static DescribedPredicate<JavaClass> resideInASubPackageOf(String root, List<String> above) {
        return new DescribedPredicate<JavaClass>(
                "reside in a sub-package of " + root + " (not above it: " + above + ")") {
            @Override
            public boolean test(JavaClass c) {
                String p = c.getPackageName();
                if (!p.startsWith(root + ".")) return false;
                for (String a : above) {
                    if (p.equals(a) || p.startsWith(a + ".")) return false;
                }
                return true;
            }
        };
    }

    /** One slice per package under {@code root}, the root package included; classes elsewhere are left out. */
    private static SliceAssignment packagesUnder(String root) {
        return new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass c) {
                String p = c.getPackageName();
                return p.equals(root) || p.startsWith(root + ".") ? SliceIdentifier.of(p) : SliceIdentifier.ignore();
            }

            @Override
            public String getDescription() {
                return "packages under " + root;
            }
        };
    }
}
