package org.apache.spark.shuffle.estuary;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.security.Hmac;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.regex.Pattern;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a Spark application's driver and executors come to hold the same Estuary application secret, without it being
 * readable by another application (docs/security.md, "Executors"). Used only with {@code spark.estuary.auth.enabled}:
 *
 * <ul>
 *   <li>{@code spark.authenticate=true}: derived on every side from Spark's own secret, which Spark hands to
 *       executors its own way on each cluster manager (YARN: the containers' credentials; Kubernetes: an environment
 *       variable or secret file of the executor pods; standalone: the shared {@code spark.authenticate.secret}).
 *       Nothing extra travels.
 *   <li>local mode ({@code local}, {@code local[N]}, ...): executors live in the driver's JVM and share its shuffle
 *       manager, so a fresh secret is made in memory and never written to any configuration.
 *   <li>otherwise: the driver makes a fresh secret and puts it under {@value #SPARK_KEY} in its SparkConf while its
 *       shuffle manager is constructed, which is before the scheduler backend takes the properties it sends each
 *       executor at registration; Spark's default {@code spark.redaction.regex} hides the key (its name holds
 *       "secret") in the UI, the event log and the REST API. Spark 1.6 redacts nothing, so there this case is
 *       refused outside local mode. Whoever can reach the driver's RPC port can also ask for these properties, as
 *       Spark itself allows without {@code spark.authenticate}.
 * </ul>
 *
 * Stateless: static functions only, safe from any thread.
 */
final class SparkApplicationSecret {
    private static final Logger LOG = LoggerFactory.getLogger(SparkApplicationSecret.class);

    /** The driver's SparkConf key executors read the generated secret from (read as the client key by the bridge). */
    static final String SPARK_KEY = "spark." + AuthConfig.APPLICATION_SECRET.key();

    private static final String SPARK_AUTHENTICATE = "spark.authenticate";
    private static final String LABEL = "estuary application secret";
    private static final int BYTES = 32;
    private static final Pattern LOCAL_MASTER = Pattern.compile("local(\\[.*])?");
    private static final SecureRandom RANDOM = new SecureRandom();

    private SparkApplicationSecret() {}

    /**
     * Driver only, while its shuffle manager is constructed: when the secret has to travel in the SparkConf, puts a
     * fresh one there (replacing one given by hand: each application gets its own).
     *
     * @param uiRedactsSecrets whether this Spark line hides keys matching its redaction regex in the UI and event log
     * @throws IllegalStateException when the secret would have to travel in the SparkConf and this Spark line shows
     *     it to anyone who can read the UI or the event log
     */
    static void prepareDriver(SparkConf sparkConf, EstuaryConf conf, boolean uiRedactsSecrets) {
        if (!conf.get(AuthConfig.ENABLED) || derivesFromSpark(sparkConf) || isLocal(sparkConf)) return;
        if (!uiRedactsSecrets) {
            throw new IllegalStateException("Estuary authentication on this Spark line needs spark.authenticate=true "
                    + "outside local mode: Estuary then derives the application secret from Spark's own. Otherwise the "
                    + "secret would have to travel to executors in the SparkConf, which this Spark line shows unredacted "
                    + "in its UI and event log.");
        }
        if (sparkConf.contains(SPARK_KEY)) {
            LOG.warn("Ignoring {}: Estuary makes each application's secret itself", SPARK_KEY);
        }
        sparkConf.set(SPARK_KEY, Base64.getEncoder().encodeToString(fresh()));
    }

    /**
     * Any process, before its first connection (the driver once SparkContext has its application id, an executor
     * once its SparkEnv is set): puts the application secret into {@code conf} when authentication is on.
     *
     * @throws IllegalStateException on an executor that was handed no secret (a driver without this code)
     */
    static void complete(SparkConf sparkConf, EstuaryConf conf) {
        if (!conf.get(AuthConfig.ENABLED)) return;
        if (derivesFromSpark(sparkConf)) {
            String sparkSecret = SparkEnv.get().securityManager().getSecretKey();
            conf.set(AuthConfig.APPLICATION_SECRET.key(), derived(sparkSecret, sparkConf.getAppId()));
        } else if (isLocal(sparkConf)) {
            if (AuthConfig.applicationSecret(conf) == null) {
                conf.set(
                        AuthConfig.APPLICATION_SECRET.key(), Base64.getEncoder().encodeToString(fresh()));
            }
        } else if (AuthConfig.applicationSecret(conf) == null) {
            throw new IllegalStateException("Estuary authentication is on but no application secret reached this "
                    + "process: the driver puts it in " + SPARK_KEY + " when it starts (is the driver's Estuary jar "
                    + "older than this one?)");
        }
    }

    /**
     * The Estuary secret of application {@code appId} derived from Spark's secret, base64. Spark's application id
     * keeps two applications sharing one Spark secret (standalone) from sharing an Estuary secret; it does not keep
     * them from computing each other's (docs/security.md).
     */
    static String derived(String sparkSecret, String appId) {
        byte[] key = Hmac.utf8(sparkSecret);
        return Base64.getEncoder().encodeToString(Hmac.sha256(key, Hmac.utf8(LABEL), Hmac.utf8(appId)));
    }

    static boolean derivesFromSpark(SparkConf sparkConf) {
        return sparkConf.getBoolean(SPARK_AUTHENTICATE, false);
    }

    /** Executors share the driver's JVM: {@code local}, {@code local[N]}, {@code local[*]}, {@code local[N,F]}. */
    static boolean isLocal(SparkConf sparkConf) {
        return LOCAL_MASTER.matcher(sparkConf.get("spark.master", "")).matches();
    }

    private static byte[] fresh() {
        byte[] secret = new byte[BYTES];
        RANDOM.nextBytes(secret);
        return secret;
    }
}
