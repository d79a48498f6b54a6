package io.estuary.mr;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import java.io.IOException;
import java.security.SecureRandom;
import java.util.Base64;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * A MapReduce job's Estuary application secret, carried in the job's {@link Credentials} as secret key
 * {@value #KEY_NAME}, never in its configuration: job.xml sits in the staging directory and the history server, where
 * other users may read it, while YARN hands a job's credentials only to that job's containers. On YARN the
 * ApplicationMaster makes it ({@link EstuaryAppMaster}, where the job's lifecycle manager lives) and adds it to its own
 * credentials, which MRAppMaster passes to every task container; under LocalJobRunner tasks share the job client's
 * JVM and the secret stays in memory ({@link LocalLifecycles}). Stateless: static functions only, safe from any thread.
 */
final class JobSecret {
    static final String KEY_NAME = "estuary.application.secret";
    private static final Text KEY = new Text(KEY_NAME);
    private static final int BYTES = 32;
    private static final SecureRandom RANDOM = new SecureRandom();

    private JobSecret() {}

    /** A fresh secret. */
    static byte[] generate() {
        byte[] secret = new byte[BYTES];
        RANDOM.nextBytes(secret);
        return secret;
    }

    /** Adds {@code secret} to the credentials of this process's current user (which MRAppMaster gives its tasks). */
    static void addToCurrentUser(byte[] secret) throws IOException {
        Credentials credentials = new Credentials();
        credentials.addSecretKey(KEY, secret);
        UserGroupInformation.getCurrentUser().addCredentials(credentials);
    }

    /** The secret from the task's job credentials or, failing that, the current user's; null when neither has it. */
    static byte[] find(JobConf job) throws IOException {
        byte[] secret = job.getCredentials().getSecretKey(KEY);
        return secret != null
                ? secret
                : UserGroupInformation.getCurrentUser().getCredentials().getSecretKey(KEY);
    }

    /** Puts {@code secret} into the client configuration (in memory only). */
    static void setIn(EstuaryConf conf, byte[] secret) {
        conf.set(AuthConfig.APPLICATION_SECRET.key(), Base64.getEncoder().encodeToString(secret));
    }
}
