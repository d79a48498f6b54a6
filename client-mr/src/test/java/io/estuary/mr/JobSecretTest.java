package io.estuary.mr;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.UserGroupInformation;
import org.junit.jupiter.api.Test;

/** Where a MapReduce job's secret lives: the job's credentials, never its configuration. */
class JobSecretTest {
    @Test
    void aTaskFindsTheSecretInItsJobCredentialsAsTheContainerTokensCarryThem() throws Exception {
        byte[] secret = JobSecret.generate();
        assertEquals(32, secret.length);
        assertFalse(Arrays.equals(secret, JobSecret.generate()));

        // What MRAppMaster writes into a task container's tokens and YarnChild reads back into the task's JobConf.
        Credentials am = new Credentials();
        am.addSecretKey(new Text(JobSecret.KEY_NAME), secret);
        ByteArrayOutputStream tokens = new ByteArrayOutputStream();
        am.writeTokenStorageToStream(new DataOutputStream(tokens));
        Credentials task = new Credentials();
        task.readTokenStorageStream(new DataInputStream(new ByteArrayInputStream(tokens.toByteArray())));
        JobConf job = new JobConf(false);
        job.setCredentials(task);

        assertArrayEquals(secret, JobSecret.find(job));
    }

    @Test
    void theApplicationMastersSecretReachesItsCurrentUsersCredentials() throws Exception {
        UserGroupInformation user = UserGroupInformation.createRemoteUser("estuary-am-test");
        byte[] secret = JobSecret.generate();
        byte[] found = user.doAs((java.security.PrivilegedExceptionAction<byte[]>) () -> {
            JobSecret.addToCurrentUser(secret);
            return JobSecret.find(new JobConf(false)); // uber tasks: the AM's own user
        });
        assertArrayEquals(secret, found);
    }

    @Test
    void theSecretIsNeverInTheJobConfiguration() throws Exception {
        JobConf job = new JobConf(false);
        job.set("estuary.master.endpoints", "127.0.0.1:1");
        job.set("estuary.auth.enabled", "true");
        byte[] secret = JobSecret.generate();
        EstuaryConf conf = MrConfBridge.toEstuaryConf(job);
        JobSecret.setIn(conf, secret);
        assertArrayEquals(secret, AuthConfig.applicationSecret(conf));

        ByteArrayOutputStream xml = new ByteArrayOutputStream();
        job.writeXml(xml);
        String written = new String(xml.toByteArray(), StandardCharsets.UTF_8);
        assertFalse(written.contains(Base64.getEncoder().encodeToString(secret)), "job.xml holds the secret");
        assertFalse(written.contains(AuthConfig.APPLICATION_SECRET.key()));
    }

    @Test
    void aSecretSetInTheJobConfigurationIsRefused() {
        JobConf job = new JobConf(false);
        job.set(AuthConfig.APPLICATION_SECRET.key(), Base64.getEncoder().encodeToString(new byte[32]));
        IllegalArgumentException refused =
                assertThrows(IllegalArgumentException.class, () -> MrConfBridge.toEstuaryConf(job));
        assertTrue(refused.getMessage().contains("job.xml"), refused.getMessage());
        assertNotEquals(-1, refused.getMessage().indexOf("credentials"));
    }
}
