package io.estuary.mr;

import io.estuary.client.ShuffleServices;
import io.estuary.client.engine.ProcessServices;
import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.hadoop.mapred.JobConf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The process's {@link ShuffleServices} as MapReduce tasks use them, and the lifecycle of local mode
 * ({@code mapreduce.framework.name=local}), where LocalJobRunner runs every task inside the job client's JVM: the
 * process's lifecycle manager, started by the first task that needs it and stopped when the JVM exits. Each job is
 * one engine shuffle of it, numbered in the order jobs first touch Estuary; a job's shuffle is forgotten (its data
 * deleted) once all its reducers have read it. The first job's configuration configures the services (masters and
 * client settings) for every later job of the JVM, and, with authentication on, one secret serves them all (it
 * never leaves the JVM). Thread-safe.
 */
final class LocalLifecycles {
    private static final Logger LOG = LoggerFactory.getLogger(LocalLifecycles.class);
    private static final Map<String, Integer> shuffleIds = new HashMap<>();
    private static final Map<String, Integer> reducersDone = new HashMap<>();

    private LocalLifecycles() {}

    /** The process's services; the first job to ask configures them. Tasks lease its client. */
    static ShuffleServices services(JobConf job) {
        return ProcessServices.get(() -> {
            EstuaryConf conf = MrConfBridge.toEstuaryConf(job);
            if (conf.get(AuthConfig.ENABLED)) JobSecret.setIn(conf, secret(job));
            return new ShuffleServices(conf, () -> startLocal(conf));
        });
    }

    /**
     * The job's secret: from the task's credentials on YARN; made here under LocalJobRunner, where the tasks and the
     * lifecycle manager share this JVM and so these services.
     */
    private static byte[] secret(JobConf job) {
        byte[] secret;
        try {
            secret = JobSecret.find(job);
        } catch (IOException e) {
            throw new UncheckedIOException("Reading the job's credentials failed", e);
        }
        if (secret != null) return secret;
        if (MrJobKeys.isLocal(job)) return JobSecret.generate();
        throw new IllegalStateException("Estuary authentication is on but this task's credentials hold no "
                + JobSecret.KEY_NAME + ": the job's ApplicationMaster must be Estuary's (yarn.app.mapreduce.am."
                + "command-opts = -Xmx<heap> io.estuary.mr.EstuaryAppMaster), which makes the job's secret");
    }

    private static LifecycleManager startLocal(EstuaryConf conf) {
        String appId = "mr-local-" + UUID.randomUUID().toString().substring(0, 8);
        LifecycleManager lm = new LifecycleManager(appId, conf, "127.0.0.1");
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            try {
                                lm.close();
                            } catch (RuntimeException e) {
                                LOG.warn("Stopping the local Estuary lifecycle manager failed: {}", e.getMessage());
                            }
                        },
                        "estuary-local-lifecycle-stop"));
        return lm;
    }

    static LifecycleManager get(JobConf job) {
        return services(job).lifecycle();
    }

    static synchronized int shuffleId(String jobId) {
        Integer id = shuffleIds.get(jobId);
        if (id == null) {
            id = shuffleIds.size();
            shuffleIds.put(jobId, id);
        }
        return id;
    }

    /** How many jobs have used Estuary in this JVM (for tests). */
    static synchronized int jobsSeen() {
        return shuffleIds.size();
    }

    /** A reducer of {@code jobId} read its partition; after the last one the job's data is deleted. */
    static synchronized void reducerDone(JobConf job, String jobId, int numReducers) {
        int done = reducersDone.merge(jobId, 1, Integer::sum);
        if (done == numReducers) {
            services(job).unregisterShuffle(shuffleId(jobId));
            reducersDone.remove(jobId);
        }
    }
}
