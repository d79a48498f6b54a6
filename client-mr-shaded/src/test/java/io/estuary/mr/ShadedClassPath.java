package io.estuary.mr;

import java.io.File;
import java.util.ArrayList;
import java.util.List;

/**
 * The class path a MapReduce JVM gets when users deploy Estuary: this test's class path (Hadoop, the test classes)
 * without any unshaded Estuary module, plus the shaded jar. Test classes stay: the job helpers of ../client-mr's
 * test jar and this module's own, compiled against the unshaded client, must link against the shaded jar's classes.
 * Stateless.
 */
final class ShadedClassPath {
    private ShadedClassPath() {}

    /** The shaded jar this module built (at package, before its tests run). */
    static File shadedJar() {
        try {
            return new File(System.getProperty("estuary.shaded.jar")).getCanonicalFile();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The entries, the shaded jar first. */
    static List<String> entries() {
        String testCp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cp = new ArrayList<>();
        cp.add(shadedJar().getAbsolutePath());
        for (String entry : testCp.split(File.pathSeparator)) {
            if (!unshadedEstuary(entry)) cp.add(entry);
        }
        return cp;
    }

    /**
     * A module jar or class folder of Estuary's own production code (a reactor run without the package phase gives
     * folders). The shaded jar, test jars and test class folders are not: the latter hold no class of the shaded jar.
     */
    static boolean unshadedEstuary(String entry) {
        if (new File(entry).getAbsoluteFile().equals(shadedJar())) return false;
        String name = new File(entry).getName();
        if (name.startsWith("estuary-")) return !name.endsWith("-tests.jar");
        return entry.replace(File.separatorChar, '/').matches(".*/target/classes/?");
    }
}
