package io.estuary.common;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;

/**
 * common keeps the layering rules: it is the bottom layer (imports no other Estuary module), has no package cycle,
 * and its sub-packages do not import its root. The other modules' rules live in the network test-jar's
 * {@code io.estuary.network.testing.LayeringRules}, which common cannot see (network depends on common); keep these
 * in step with its {@code Module.COMMON}.
 */
class LayeringTest {
    private static final String ROOT = "io.estuary.common";
    private static final JavaClasses CLASSES = new ClassFileImporter().importPath(Paths.get("target", "classes"));

    @Test
    void commonImportsNoOtherEstuaryModule() {
        noClasses()
                .that()
                .resideInAPackage(ROOT + "..")
                .should()
                .dependOnClassesThat(resideInAPackage("io.estuary..").and(not(resideInAPackage(ROOT + ".."))))
                .because("common is the bottom layer every module and client jar carries")
                .check(CLASSES);
    }

    @Test
    void commonHasNoPackageCycle() {
        slices().assignedFrom(new SliceAssignment() {
                    @Override
                    public SliceIdentifier getIdentifierOf(JavaClass c) {
                        String p = c.getPackageName();
                        return p.equals(ROOT) || p.startsWith(ROOT + ".")
                                ? SliceIdentifier.of(p)
                                : SliceIdentifier.ignore();
                    }

                    @Override
                    public String getDescription() {
                        return "packages under " + ROOT;
                    }
                })
                .should()
                .beFreeOfCycles()
                .check(CLASSES);
    }

    @Test
    void subPackagesDoNotImportTheRoot() {
        noClasses()
                .that(new DescribedPredicate<JavaClass>("reside in a sub-package of " + ROOT) {
                    @Override
                    public boolean test(JavaClass c) {
                        return c.getPackageName().startsWith(ROOT + ".");
                    }
                })
                .should()
                .dependOnClassesThat()
                .resideInAPackage(ROOT)
                .because("the root package sits on top of its sub-packages")
                .check(CLASSES);
    }
}
