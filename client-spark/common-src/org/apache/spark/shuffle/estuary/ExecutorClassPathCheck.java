package org.apache.spark.shuffle.estuary;

import java.io.File;
import java.net.URL;
import org.apache.spark.SparkConf;

/**
 * Fails a driver at start when executors could not load Estuary: before Spark 4 an executor creates its shuffle
 * manager when its JVM starts, before it fetches the application's jars, so a jar given only with
 * {@code --jars} / {@code spark.jars} kills every executor with {@code ClassNotFoundException}, and a standalone
 * cluster (or {@code local-cluster}) relaunches them without end while the job hangs.
 *
 * <p>The check is narrow on purpose: only standalone and local-cluster masters (YARN puts application jars on the
 * executors' class path), only Spark before 4, and only when the driver itself loaded Estuary from an application
 * jar (not from its JVM class path) that {@code spark.executor.extraClassPath} does not name. Stateless.
 */
final class ExecutorClassPathCheck {
    private ExecutorClassPathCheck() {}

    /** Checks the running driver; {@code manager} is the shuffle manager's class as the driver loaded it. */
    static void verify(SparkConf conf, Class<?> manager) {
        String sparkVersion = org.apache.spark.package$.MODULE$.SPARK_VERSION();
        URL jar = manager.getProtectionDomain().getCodeSource() == null
                ? null
                : manager.getProtectionDomain().getCodeSource().getLocation();
        boolean onJvmClassPath = manager.getClassLoader() == ClassLoader.getSystemClassLoader();
        String problem = problem(
                conf.get("spark.master", ""),
                sparkVersion,
                onJvmClassPath,
                jar,
                conf.get("spark.executor.extraClassPath", ""));
        if (problem != null) throw new IllegalStateException(problem);
    }

    /** The message to fail with, or null when executors will find Estuary (or this check cannot tell). */
    static String problem(
            String master, String sparkVersion, boolean onJvmClassPath, URL jar, String executorClassPath) {
        boolean standalone = master.startsWith("spark://") || master.startsWith("local-cluster");
        if (!standalone || onJvmClassPath || jar == null || majorVersion(sparkVersion) >= 4) return null;
        String name = new File(jar.getPath()).getName();
        if (!name.isEmpty() && executorClassPath.contains(name)) return null;
        return "Estuary's shuffle manager was loaded from an application jar (" + jar + ", given with --jars or "
                + "spark.jars), but Spark " + sparkVersion
                + " executors create their shuffle manager before they fetch "
                + "application jars: every executor would die with ClassNotFoundException and be relaunched without end. "
                + "Put the jar on the class path at JVM start instead: spark.driver.extraClassPath=<jar> and "
                + "spark.executor.extraClassPath=<jar> (the jar present at that path on every machine), or copy it into "
                + "$SPARK_HOME/jars on every machine. See README, 'Using Estuary from Spark'.";
    }

    private static int majorVersion(String version) {
        int dot = version.indexOf('.');
        try {
            return Integer.parseInt(dot < 0 ? version : version.substring(0, dot));
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
