package org.apache.spark.shuffle.estuary;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/**
 * When a driver refuses to start because executors could not load Estuary (the CI side of
 * build/spark-submit/check.sh, which runs the real spark-submit both ways).
 */
class ExecutorClassPathCheckTest {
    private static final String CLUSTER = "local-cluster[2,1,1024]";

    private static URL jar() throws Exception {
        return new URL("file:/opt/estuary/estuary-client-spark-3-shaded_2.12-0.1.0.jar");
    }

    @Test
    void jarOnlyAmongApplicationJarsFailsWithWhatToDo() throws Exception {
        for (String master : new String[] {CLUSTER, "spark://host:7077"}) {
            String problem = ExecutorClassPathCheck.problem(master, "3.5.8", false, jar(), "");
            assertNotNull(problem, master);
            assertTrue(
                    problem.contains("spark.executor.extraClassPath")
                            && problem.contains("spark.driver.extraClassPath")
                            && problem.contains("$SPARK_HOME/jars"),
                    problem);
        }
        assertNotNull(ExecutorClassPathCheck.problem(CLUSTER, "2.4.8", false, jar(), "/other/thing.jar"));
    }

    @Test
    void theWaysThatWorkPass() throws Exception {
        // On the JVM class path (extraClassPath or $SPARK_HOME/jars).
        assertNull(ExecutorClassPathCheck.problem(CLUSTER, "3.5.8", true, jar(), ""));
        // Among the application's jars and on the executors' class path too.
        assertNull(ExecutorClassPathCheck.problem(
                CLUSTER, "3.5.8", false, jar(), "/opt/estuary/estuary-client-spark-3-shaded_2.12-0.1.0.jar"));
        // Spark 4 loads shuffle managers from application jars; YARN and local mode put them on the class path.
        assertNull(ExecutorClassPathCheck.problem(CLUSTER, "4.0.4", false, jar(), ""));
        assertNull(ExecutorClassPathCheck.problem("yarn", "3.5.8", false, jar(), ""));
        assertNull(ExecutorClassPathCheck.problem("local[2]", "3.5.8", false, jar(), ""));
    }

    @Test
    void aDriverWithEstuaryOnItsClassPathStarts() {
        // This test JVM has Estuary on its class path, as spark.driver.extraClassPath gives it.
        assertDoesNotThrow(
                () -> ExecutorClassPathCheck.verify(new SparkConf().setMaster(CLUSTER), EstuaryShuffleManager.class));
    }
}
