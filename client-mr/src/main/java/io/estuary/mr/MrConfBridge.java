package io.estuary.mr;

import io.estuary.client.engine.EngineConf;
import io.estuary.client.engine.EngineSettings;
import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;

/**
 * Reads the {@code estuary.*} settings of a job configuration as Estuary's own keys (the same declarations as for
 * Spark, without Spark's {@code spark.} prefix). An unknown {@code estuary.*} key fails, as it does for the servers.
 * The application secret is refused here: it travels in the job's credentials ({@link JobSecret}), because job.xml
 * is readable by others.
 *
 * <p>Stateless: static functions only, safe from any thread.
 */
final class MrConfBridge {
    private MrConfBridge() {}

    static EstuaryConf toEstuaryConf(Configuration job) {
        String secretKey = AuthConfig.APPLICATION_SECRET.key();
        if (!job.get(secretKey, "").isEmpty()) {
            throw new IllegalArgumentException(
                    secretKey + " may not be set in a job configuration: job.xml is readable "
                            + "by other users. Estuary makes each job's secret itself and hands it to the job's tasks in the "
                            + "job's credentials.");
        }
        List<String> keys = new ArrayList<>();
        for (Map.Entry<String, String> kv : job) keys.add(kv.getKey());
        // Workers slow down heavy pushers per user: the job's user by default.
        return EngineConf.fromEngineKeys(
                EngineSettings.of(keys, job::get),
                "",
                () -> job.get("mapreduce.job.user.name", System.getProperty("user.name", "")));
    }
}
