package org.apache.spark.shuffle.estuary;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import java.util.Base64;
import org.apache.spark.SparkConf;
import org.apache.spark.internal.config.package$;
import org.junit.jupiter.api.Test;
import scala.util.matching.Regex;

/** Which secret a Spark driver and its executors end up holding, and where it travels (never by SparkEnv here). */
class SparkApplicationSecretTest {
    private static final String CLUSTER = "local-cluster[2,1,1024]";

    private static SparkConf driver(String master) {
        return new SparkConf(false)
                .setMaster(master)
                .set("spark.estuary.master.endpoints", "127.0.0.1:1")
                .set("spark.estuary.auth.enabled", "true");
    }

    /** What the driver's services would be configured with: read from the SparkConf after the driver prepared it. */
    private static EstuaryConf prepared(SparkConf sparkConf, boolean uiRedactsSecrets) {
        SparkApplicationSecret.prepareDriver(sparkConf, SparkConfBridge.toEstuaryConf(sparkConf), uiRedactsSecrets);
        return SparkConfBridge.toEstuaryConf(sparkConf);
    }

    @Test
    void aClusterDriverPutsAFreshSecretWhereSparkRedactsIt() {
        SparkConf first = driver(CLUSTER);
        SparkConf second = driver(CLUSTER);
        EstuaryConf firstConf = prepared(first, true);
        prepared(second, true);

        byte[] secret = AuthConfig.applicationSecret(firstConf);
        assertNotNull(secret);
        assertEquals(32, secret.length);
        assertNotEquals(first.get(SparkApplicationSecret.SPARK_KEY), second.get(SparkApplicationSecret.SPARK_KEY));
        // Spark's own default redaction pattern (UI environment page, event log, REST API) hides the key.
        Regex redaction = new SparkConf(false).get(package$.MODULE$.SECRET_REDACTION_PATTERN());
        assertTrue(redaction.findFirstIn(SparkApplicationSecret.SPARK_KEY).isDefined());

        // An executor reads what the driver sent it.
        SparkConf executor = new SparkConf(false);
        for (scala.Tuple2<String, String> kv : first.getAll()) executor.set(kv._1(), kv._2());
        EstuaryConf executorConf = SparkConfBridge.toEstuaryConf(executor);
        SparkApplicationSecret.complete(executor, executorConf);
        assertArrayEquals(secret, AuthConfig.applicationSecret(executorConf));
    }

    @Test
    void aSecretGivenByHandIsReplaced() {
        String byHand = Base64.getEncoder().encodeToString(new byte[32]);
        SparkConf conf = driver(CLUSTER).set(SparkApplicationSecret.SPARK_KEY, byHand);
        prepared(conf, true);
        assertNotEquals(byHand, conf.get(SparkApplicationSecret.SPARK_KEY));
    }

    @Test
    void localModeKeepsTheSecretInMemory() {
        SparkConf conf = driver("local[2]");
        EstuaryConf estuary = prepared(conf, false); // even on a line that redacts nothing
        assertFalse(conf.contains(SparkApplicationSecret.SPARK_KEY));
        SparkApplicationSecret.complete(conf, estuary);
        assertEquals(32, AuthConfig.applicationSecret(estuary).length);
    }

    @Test
    void authenticationOffChangesNothing() {
        SparkConf conf = driver(CLUSTER).set("spark.estuary.auth.enabled", "false");
        EstuaryConf estuary = prepared(conf, true);
        SparkApplicationSecret.complete(conf, estuary);
        assertFalse(conf.contains(SparkApplicationSecret.SPARK_KEY));
        assertEquals(null, AuthConfig.applicationSecret(estuary));
    }

    @Test
    void aLineThatRedactsNothingNeedsSparkAuthenticateOutsideLocalMode() {
        IllegalStateException refused =
                assertThrows(IllegalStateException.class, () -> prepared(driver(CLUSTER), false));
        assertTrue(refused.getMessage().contains("spark.authenticate=true"), refused.getMessage());

        SparkConf authenticated = driver(CLUSTER).set("spark.authenticate", "true");
        prepared(authenticated, false);
        assertFalse(authenticated.contains(SparkApplicationSecret.SPARK_KEY), "derived: nothing travels");
    }

    @Test
    void anExecutorHandedNoSecretSaysWhy() {
        SparkConf executor = driver(CLUSTER);
        IllegalStateException refused = assertThrows(
                IllegalStateException.class,
                () -> SparkApplicationSecret.complete(executor, SparkConfBridge.toEstuaryConf(executor)));
        assertTrue(refused.getMessage().contains(SparkApplicationSecret.SPARK_KEY), refused.getMessage());
    }

    @Test
    void derivedSecretsDependOnSparksSecretAndTheApplication() {
        String a = SparkApplicationSecret.derived("spark secret", "app-1");
        assertEquals(a, SparkApplicationSecret.derived("spark secret", "app-1"));
        assertNotEquals(a, SparkApplicationSecret.derived("spark secret", "app-2"));
        assertNotEquals(a, SparkApplicationSecret.derived("other secret", "app-1"));
        assertEquals(32, Base64.getDecoder().decode(a).length);
    }

    @Test
    void onlyTrueLocalMastersShareTheDriversJvm() {
        for (String m : new String[] {"local", "local[2]", "local[*]", "local[2,3]"}) {
            assertTrue(SparkApplicationSecret.isLocal(new SparkConf(false).setMaster(m)), m);
        }
        for (String m : new String[] {CLUSTER, "yarn", "spark://h:7077", "k8s://https://h"}) {
            assertFalse(SparkApplicationSecret.isLocal(new SparkConf(false).setMaster(m)), m);
        }
    }
}
